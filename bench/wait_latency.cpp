// emq_bench_wait: the time from a job's completion to its waiter's return,
// for `jobs` jobs one after another. Per job: enqueue it with the queue's
// events stream, claim it, start a Waiter (echomq/wait.h, what `emq wait`
// runs) on a thread of its own and let it block, then read CLOCK_MONOTONIC
// and send `complete`; the waiter reads the clock as it returns. Prints
// {"samples_ns": [...], "commands_per_wait": x}: the waits' commands too,
// which a wait that polled would multiply.
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

#include "echomq/events.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "monotonic.h"
#include "echomq/wait.h"

int main(int argc, char** argv) {
  CLI::App app{"Completion to wait's return, job after job."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "wait";
  long long jobs = 1000;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the queue");
  app.add_option("--jobs", jobs, "how many jobs")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  using namespace echomq;
  const ConnectionOptions options = parse_url(url);
  const QueueKeys q(queue);
  Executor x(options);
  constexpr std::int64_t kEvents = 10000;
  x.command(events_write(q, kEvents));
  Waiter waiter(options);
  std::string out = "{\"samples_ns\":[";
  for (long long i = 0; i < jobs; ++i) {
    const std::string id = mint_job_id();
    x.eval(with_events(enqueue_call(q, id, "p"), q, kEvents));
    std::vector<ClaimedJob> claimed = decode_claim(x.eval(with_events(claim_call(q, {60000, 1, 0}), q, kEvents)));
    std::atomic<long long> returned{0};
    std::atomic<bool> blocked{false};
    const std::uint64_t before = waiter.commands();
    std::thread waiting([&] {
      waiter.wait(q, {id});
      returned = monotonic_ns();
    });
    // Blocked: its MULTI (5 commands) and its XREAD (with the XRANGE behind
    // it) are out, and a millisecond lets the server hold it.
    while (waiter.commands() < before + 7) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const long long sent = monotonic_ns();
    x.eval(with_events(complete_call(q, {id, claimed.at(0).lease_epoch}, 0, ""), q, kEvents));
    waiting.join();
    out += (i ? "," : "") + std::to_string(returned - sent);
  }
  std::printf("%s],\"commands_per_wait\":%.2f}\n", out.c_str(),
              static_cast<double>(waiter.commands()) / static_cast<double>(jobs));
  return 0;
}
