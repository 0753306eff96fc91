// emq_bench_enqueue: enqueues jobs through libechomq over one connection,
// `depth` enqueue calls per round trip (Executor::eval_batch), and prints
// one JSON line: {"jobs":N,"enqueued":N,"seconds":S,"rate":R}.
//
// The clock runs from the first call to the last reply; connecting and
// loading the scripts come before it, as valkey-benchmark connects before
// it counts. Ids are JOB_ + a 12-digit number, the length valkey-benchmark's
// __rand_int__ gives, so both put the same bytes on the wire. Several
// --queue values share the jobs round robin (the memory scenario).
// --unique gives each job a unique key of its own ("u" and its number), so
// every enqueue takes a fresh lock: the optioned enqueue at its dearest.
// --groups N puts job n in group "t<n mod N>" (the groups scenario).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "job_ids.h"

int main(int argc, char** argv) {
  CLI::App app{"Enqueue jobs through libechomq, pipelined, and print the rate."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::vector<std::string> queues{"bench"};
  std::string payload = "x";
  long long jobs = 100000;
  long long first = 0;
  int depth = 1;
  bool unique = false;
  long long groups = 0;
  app.add_option("--url", url, "the server");
  app.add_option("--groups", groups, "jobs go round robin to this many groups (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--unique", unique, "each job with a unique key of its own");
  app.add_option("--queue", queues, "queue(s); jobs go round robin")->expected(1, 1000);
  app.add_option("--jobs", jobs, "how many jobs")->check(CLI::PositiveNumber);
  app.add_option("--first", first, "number of the first job id (to add to a queue without duplicates)");
  app.add_option("--depth", depth, "enqueue calls per round trip")->check(CLI::Range(1, 100000));
  app.add_option("--payload", payload, "the payload of every job");
  CLI11_PARSE(app, argc, argv);

  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    std::vector<echomq::QueueKeys> keys;
    for (const std::string& q : queues) keys.emplace_back(q);

    long long enqueued = 0;
    std::vector<echomq::ScriptCall> calls;
    calls.reserve(static_cast<std::size_t>(depth));
    const auto t0 = std::chrono::steady_clock::now();
    for (long long i = 0; i < jobs;) {
      calls.clear();
      for (int k = 0; k < depth && i < jobs; ++k, ++i) {
        const long long n = first + i;
        const echomq::QueueKeys& q = keys[static_cast<std::size_t>(n) % keys.size()];
        echomq::EnqueueOptions o;
        if (unique) o.job.unique = echomq::UniqueKey{"u" + std::to_string(n), std::nullopt, 0};
        if (groups > 0) o.group = "t" + std::to_string(n % groups);
        calls.push_back(echomq::enqueue_call(q, emq_bench::job_id(n), payload, o));
      }
      for (const echomq::Reply& r : x.eval_batch(calls)) {
        if (echomq::decode_enqueue(r) == echomq::EnqueueResult::Enqueued) ++enqueued;
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"jobs\":%lld,\"enqueued\":%lld,\"seconds\":%.6f,\"rate\":%.1f}\n", jobs, enqueued, seconds,
                static_cast<double>(jobs) / seconds);
    return enqueued == jobs ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_enqueue: %s\n", e.what());
    return 1;
  }
}
