// emq_bench_settle: the server's time per ending transition, with and
// without a unique key. Enqueues --jobs jobs (each with a unique key of its
// own under --unique), claims them all, resets the server's command
// statistics, then completes them all, --depth per round trip, and prints
// one JSON line: {"jobs":N,"usec_per_complete":U,"command":"evalsha"}.
// The complete passes the uniq root either way (as emqd does); only the
// row's key differs. On a server with the emq module the calls are
// EMQ.COMPLETE (command "emq.complete"), else EVALSHA.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "command_stats.h"
#include "job_ids.h"

int main(int argc, char** argv) {
  CLI::App app{"The server's time per complete, with or without a unique key."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "settle";
  long long jobs = 20000;
  int depth = 64;
  bool unique = false;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the queue");
  app.add_option("--jobs", jobs, "how many jobs")->check(CLI::PositiveNumber);
  app.add_option("--depth", depth, "calls per round trip")->check(CLI::Range(1, 100000));
  app.add_flag("--unique", unique, "each job with a unique key of its own");
  CLI11_PARSE(app, argc, argv);

  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    const echomq::QueueKeys q(queue);
    std::vector<echomq::ScriptCall> calls;
    for (long long i = 0; i < jobs; ++i) {
      echomq::EnqueueOptions o;
      if (unique) o.job.unique = echomq::UniqueKey{"u" + std::to_string(i), std::nullopt, 0};
      calls.push_back(echomq::enqueue_call(q, emq_bench::job_id(i), "x", o));
      if (static_cast<int>(calls.size()) == depth || i + 1 == jobs) {
        x.eval_batch(calls);
        calls.clear();
      }
    }
    std::vector<echomq::Lease> leases;
    while (static_cast<long long>(leases.size()) < jobs) {
      std::vector<echomq::ClaimedJob> got = echomq::claim(x, q, {3600000, 1000, 0});
      if (got.empty()) throw echomq::Error(echomq::ErrorKind::Reply, "settle", "the queue ran dry before every job");
      for (const echomq::ClaimedJob& j : got) leases.push_back({j.id, j.lease_epoch});
    }
    const std::string command = x.native() ? "emq.complete" : "evalsha";
    x.command({"CONFIG", "RESETSTAT"});
    for (std::size_t i = 0; i < leases.size(); ++i) {
      calls.push_back(echomq::complete_call(q, leases[i], 0, ""));
      if (static_cast<int>(calls.size()) == depth || i + 1 == leases.size()) {
        for (const echomq::Reply& r : x.eval_batch(calls)) {
          if (echomq::decode_complete(r) != echomq::CompleteResult::Completed) {
            throw echomq::Error(echomq::ErrorKind::Reply, "settle", "a complete lost its lease");
          }
        }
        calls.clear();
      }
    }
    const auto [ncalls, usec] = emq_bench::command_stats(x, command);
    if (ncalls != jobs) {
      throw echomq::Error(echomq::ErrorKind::Reply, "settle",
                          "counted " + std::to_string(ncalls) + " " + command + " calls, not " + std::to_string(jobs));
    }
    std::printf("{\"jobs\":%lld,\"usec_per_complete\":%.3f,\"command\":\"%s\"}\n", jobs,
                static_cast<double>(usec) / static_cast<double>(jobs), command.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_settle: %s\n", e.what());
    return 1;
  }
}
