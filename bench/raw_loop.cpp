// emq_bench_raw_loop: what the server can do for a worker with the
// protocol and nothing else, the ceiling the daemon's end-to-end figures
// are held against. Each channel (a connection and a thread of its own)
// claims up to `batch` jobs, then completes them all and claims the next
// batch in one pipelined round trip, as the daemon's claim loop does, but
// with no handler, no lease renewal, no metrics. Runs until `jobs` have
// completed; prints {"jobs":N,"seconds":S,"rate":R,"claims":C}. The clock
// starts when every channel is connected, before the first claim.
//
// By default one channel, no events, no reads: the simple loop. With
// --channels 2 --events 10000 --reads it sends what emqd's claim loop sends
// at its best (daemon/claim_loop.cpp): two round trips on the wire at once,
// one per connection; the queue's events stream with every transition, its
// length written to meta as emqd writes a queue's default; and behind each
// claim the two reads emqd's claims carry (meta's limits, flows and events;
// the pending count), the events length learnt from them.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "echomq/claim_meta.h"
#include "echomq/errors.h"
#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"

namespace {

struct Settings {
  echomq::ConnectionOptions server;
  std::string queue;
  long long jobs = 0;
  int batch = 1;
  bool reads = false;
};

// What the channels share: the jobs still to claim, and the counts.
struct Tally {
  std::atomic<long long> unclaimed;
  std::atomic<long long> completed{0};
  std::atomic<long long> claims{0};
  std::atomic<bool> dry{false};  // a claim came back short: the queue holds no more
};

// Up to `batch` of the jobs still unclaimed, taken from the tally.
int take(Tally& t, int batch) {
  long long left = t.unclaimed.load();
  while (left > 0) {
    const long long n = std::min<long long>(left, batch);
    if (t.unclaimed.compare_exchange_weak(left, left - n)) return static_cast<int>(n);
  }
  return 0;
}

// One channel: settle what the last turn claimed, and claim again, in one
// round trip per turn, until the queue's jobs are claimed and completed.
void run_channel(const Settings& s, echomq::Executor& x, Tally& t) {
  const echomq::QueueKeys q(s.queue);
  std::vector<echomq::ClaimedJob> held;
  std::vector<echomq::ScriptCall> calls;
  const std::vector<echomq::Command> reads = {echomq::claim_meta_read(q), {"ZCARD", q.pending}};
  while (true) {
    calls.clear();
    for (const echomq::ClaimedJob& j : held) calls.push_back(echomq::complete_call(q, {j.id, j.lease_epoch}, 0, ""));
    const int want = t.dry ? 0 : take(t, s.batch);
    if (want > 0) calls.push_back(echomq::claim_call(q, {30000, want, 100}));
    if (calls.empty()) return;
    const bool with_reads = want > 0 && s.reads;
    std::vector<echomq::Reply> replies = with_reads ? x.eval_batch(calls, reads) : x.eval_batch(calls);
    for (std::size_t i = 0; i < held.size(); ++i) {
      if (echomq::decode_complete(replies[i]) == echomq::CompleteResult::Completed) ++t.completed;
    }
    held.clear();
    if (want == 0) continue;
    ++t.claims;
    if (with_reads && s.server.events) {
      s.server.events->learnt(s.queue, echomq::decode_claim_meta(replies[calls.size()]).events);
    }
    held = echomq::decode_claim(std::move(replies[calls.size() - 1]));
    if (static_cast<int>(held.size()) < want) t.dry = true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Claim and complete jobs in pipelined batches, no daemon: the server's ceiling for emqd."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string executor = "auto";
  Settings s;
  s.queue = "bench";
  s.jobs = 100000;
  int channels = 1;
  std::int64_t events = 0;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", s.queue, "the queue");
  app.add_option("--jobs", s.jobs, "how many jobs to complete")->check(CLI::PositiveNumber);
  app.add_option("--batch", s.batch, "jobs claimed per round trip (the concurrency)")->check(CLI::Range(1, 100000));
  app.add_option("--channels", channels, "connections, each with one round trip on the wire (emqd's: 2)")
      ->check(CLI::Range(1, 64));
  app.add_option("--events", events, "the queue's events length, written to meta and passed (0: no events)")
      ->check(CLI::Range(std::int64_t{0}, echomq::kMaxEventsLength));
  app.add_flag("--reads", s.reads, "behind each claim, the two reads emqd's claims carry");
  app.add_option("--executor", executor, "auto, scripted or native")
      ->check(CLI::IsMember({"auto", "scripted", "native"}));
  CLI11_PARSE(app, argc, argv);

  try {
    s.server = echomq::parse_url(url);
    s.server.executor = executor == "native"     ? echomq::ExecutorChoice::Native
                        : executor == "scripted" ? echomq::ExecutorChoice::Scripted
                                                 : echomq::ExecutorChoice::Auto;
    if (events > 0) s.server.events = std::make_shared<echomq::EventsBook>();
    std::vector<std::unique_ptr<echomq::Executor>> xs;
    for (int i = 0; i < channels; ++i) {
      xs.push_back(std::make_unique<echomq::Executor>(s.server));
      xs.back()->ensure_connected();
    }
    const echomq::QueueKeys q(s.queue);
    if (events > 0) {
      xs[0]->command(echomq::events_write(q, events));
      s.server.events->length(*xs[0], s.queue);
    }

    Tally t;
    t.unclaimed = s.jobs;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    std::vector<std::string> failures(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      threads.emplace_back([&, i] {
        try {
          run_channel(s, *xs[i], t);
        } catch (const std::exception& e) {
          failures[i] = e.what();
          t.dry = true;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const std::string& f : failures) {
      if (!f.empty()) throw std::runtime_error(f);
    }
    const long long completed = t.completed;
    std::printf("{\"jobs\":%lld,\"seconds\":%.6f,\"rate\":%.1f,\"claims\":%lld}\n", completed, seconds,
                static_cast<double>(completed) / seconds, t.claims.load());
    if (completed != s.jobs) {
      std::fprintf(stderr, "emq_bench_raw_loop: completed %lld of %lld: the queue held fewer jobs\n", completed,
                   s.jobs);
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_raw_loop: %s\n", e.what());
    return 1;
  }
}
