// emq_bench_raw_loop: what one worker connection can do with the protocol
// and nothing else, the ceiling the daemon's end-to-end figure is held
// against. Claims up to `batch` jobs (the daemon's concurrency), then
// completes them all and claims the next batch in one pipelined round
// trip, as the daemon's claim loop does, but with no handler, no threads,
// no lease renewal, no metrics. Runs until `jobs` have completed; prints
// {"jobs":N,"seconds":S,"rate":R}. The clock starts before the first claim.
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

int main(int argc, char** argv) {
  CLI::App app{"Claim and complete jobs in pipelined batches over one connection, no daemon."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "bench";
  long long jobs = 100000;
  int batch = 1;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the queue");
  app.add_option("--jobs", jobs, "how many jobs to complete")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "jobs claimed per round trip (the concurrency)")->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);

  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    const echomq::QueueKeys q(queue);
    const echomq::ClaimArgs claim{30000, batch, 100};

    long long completed = 0;
    std::vector<echomq::ClaimedJob> held;
    std::vector<echomq::ScriptCall> calls;
    const auto t0 = std::chrono::steady_clock::now();
    while (true) {
      calls.clear();
      for (const echomq::ClaimedJob& j : held) calls.push_back(echomq::complete_call(q, {j.id, j.lease_epoch}, 0, ""));
      const bool more = completed + static_cast<long long>(held.size()) < jobs;
      if (more) calls.push_back(echomq::claim_call(q, claim));
      if (calls.empty()) break;
      std::vector<echomq::Reply> replies = x.eval_batch(calls);
      for (std::size_t i = 0; i < held.size(); ++i) {
        if (echomq::decode_complete(replies[i]) == echomq::CompleteResult::Completed) ++completed;
      }
      held.clear();
      if (more) {
        held = echomq::decode_claim(std::move(replies.back()));
        if (held.empty()) break;  // the queue ran dry before `jobs`
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"jobs\":%lld,\"seconds\":%.6f,\"rate\":%.1f}\n", completed, seconds,
                static_cast<double>(completed) / seconds);
    if (completed != jobs) {
      std::fprintf(stderr, "emq_bench_raw_loop: completed %lld of %lld: the queue held fewer jobs\n", completed, jobs);
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_raw_loop: %s\n", e.what());
    return 1;
  }
}
