// The heartbeat against a real valkey-server, with a claim loop running a
// job as a real process held at a gate (tests/handlers/rendezvous.sh): the
// daemon's hash, its work hash and its member of {emq}:daemons say who it
// is and what it runs, expiring after six beats; a signal is handed to the
// daemon's action and answered by the ack of a beat that comes at once; a
// farewell leaves no key behind.
#include "duties/heartbeat.h"

#include <gtest/gtest.h>

#include <atomic>

#include "echomq/daemons.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "handler_gate.h"
#include "handlers/exec_handler.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::int64_t kBeatMs = 200;

class HeartbeatTest : public ::testing::Test {
 protected:
  HeartbeatTest() {
    config.daemon.name = "beat-host";
    config.daemon.beat_s = kBeatMs / 1000.0;
    q.name = "h";
    q.concurrency = 2;
    q.lease_ms = 30000;
    q.poll_max_ms = 20;
    q.handler = gate.handler();
    handler = make_exec_handler(q, {});
    handler->start();
  }
  std::unique_ptr<Heartbeat> heartbeat(ClaimLoop& loop) {
    Heartbeat::Actions actions{[this] { ++quiets; }, [this] { ++stops; }};
    return std::make_unique<Heartbeat>(config, server.options(), std::vector<ClaimLoop*>{&loop}, metrics,
                                       ReconnectPolicy{}, actions);
  }
  std::optional<DaemonInfo> read(const std::string& id) { return read_daemons(x, {id}, true).front().daemon; }

  test::ValkeyServer server;
  Executor x{server.options()};
  test::HandlerGate gate;
  Config config;
  QueueConfig q;
  QueueKeys keys{"h"};
  Metrics metrics{{"h"}, "test"};
  std::unique_ptr<Handler> handler;
  std::atomic<int> quiets{0}, stops{0};
};

TEST_F(HeartbeatTest, SaysWhoItIsAndWhatItRunsAndExpiresAfterSixBeats) {
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "p");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  auto beat = heartbeat(loop);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() == 1; }, seconds(10)));
  beat->start();
  std::optional<DaemonInfo> d;
  ASSERT_TRUE(test::wait_for([&] { return (d = read(beat->id())) && d->jobs.size() == 1; }, seconds(10)));
  EXPECT_EQ(beat->id().rfind("beat-host-" + std::to_string(::getpid()) + "-", 0), 0u) << beat->id();
  EXPECT_TRUE(valid_daemon_id(beat->id()));
  EXPECT_EQ(d->host, "beat-host");
  EXPECT_EQ(d->pid, ::getpid());
  EXPECT_EQ(d->state, "running");
  EXPECT_EQ(d->queues, std::vector<std::string>{"h"});
  EXPECT_EQ(d->slots, 2);
  EXPECT_EQ(d->busy, 1);
  EXPECT_EQ(d->executor, "scripted");
  EXPECT_FALSE(d->ack.has_value());
  EXPECT_TRUE(d->problems.empty()) << d->problems.front();
  EXPECT_EQ(d->jobs[0].queue, "h");
  EXPECT_EQ(d->jobs[0].id, id);
  EXPECT_EQ(d->jobs[0].attempt, 1);
  const std::int64_t now = x.server_time_ms();
  EXPECT_LE(d->jobs[0].started_ms, now);
  EXPECT_LE(now - d->beat_ms, 2 * kBeatMs + 500);
  // Both keys live six beats past the last one; the member's score is it.
  const DaemonKeys k(beat->id());
  for (const std::string& key : {k.hash, k.work}) {
    const std::int64_t ttl = x.command({"PTTL", key}).integer;
    EXPECT_GT(ttl, 0) << key;
    EXPECT_LE(ttl, 6 * kBeatMs) << key;
  }
  EXPECT_TRUE(x.command({"ZSCORE", std::string(kDaemonsKey), beat->id()}).type == Reply::Type::String);

  // The job done, the next beat replaces the work hash with nothing.
  gate.open();
  ASSERT_TRUE(test::wait_for([&] { return (d = read(beat->id())) && d->jobs.empty() && d->busy == 0; }, seconds(10)));
  EXPECT_EQ(x.command({"EXISTS", k.work}).integer, 0);
  beat->farewell();
  loop.request_stop(milliseconds(0));
  loop.join();
}

// With prefetch, the jobs claimed ahead wait in the daemon for a slot: busy
// counts what the slots run (never more than the slots), prefetched the
// rest, and the work hash says which job is which.
TEST_F(HeartbeatTest, JobsClaimedAheadAreCountedApartFromTheBusySlots) {
  q.concurrency = 1;
  q.prefetch = 3;
  for (int i = 0; i < 6; ++i) enqueue(x, keys, mint_job_id(), "p");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  auto beat = heartbeat(loop);
  loop.start();
  beat->start();
  std::optional<DaemonInfo> d;
  // A beat between the claim and the first job taking its slot says four
  // prefetched; the one after it is the picture to check.
  ASSERT_TRUE(test::wait_for(
      [&] { return gate.arrived().size() == 1 && (d = read(beat->id())) && d->jobs.size() == 4 && d->busy > 0; },
      seconds(10)));
  EXPECT_EQ(d->slots, 1);
  EXPECT_EQ(d->busy, 1) << "only the job at the gate runs";
  EXPECT_EQ(d->prefetched, 3);
  std::vector<std::string> running;
  for (const DaemonJob& j : d->jobs) {
    if (!j.prefetched) running.push_back(j.id);
  }
  EXPECT_EQ(running, std::vector<std::string>{*gate.arrived().begin()});

  gate.open();
  ASSERT_TRUE(test::wait_for([&] { return (d = read(beat->id())) && d->jobs.empty(); }, seconds(20)));
  EXPECT_EQ(d->busy, 0);
  EXPECT_EQ(d->prefetched, 0);
  beat->farewell();
  loop.request_stop(milliseconds(0));
  loop.join();
}

TEST_F(HeartbeatTest, ASignalIsActedOnAndItsAckBeatsAtOnce) {
  ClaimLoop loop(q, server.options(), *handler, metrics);
  // A beat of a second, so that only the beat that follows the action at
  // once can answer within it.
  config.daemon.beat_s = 1;
  auto beat = heartbeat(loop);
  beat->start();
  ASSERT_TRUE(test::wait_for([&] { return read(beat->id()).has_value(); }, seconds(10)));
  const DaemonKeys k(beat->id());
  // An unknown signal is said and ignored: no action, no ack.
  x.command({"RPUSH", k.signals, "reload"});
  const std::int64_t sent = x.server_time_ms();
  x.command({"RPUSH", k.signals, std::string(kSignalQuiet)});
  ASSERT_TRUE(test::wait_for([&] { return quiets.load() == 1; }, seconds(5)));
  std::optional<DaemonInfo> d;
  ASSERT_TRUE(test::wait_for([&] { return (d = read(beat->id())) && d->ack.has_value(); }, seconds(5)));
  EXPECT_EQ(d->ack->signal, "quiet");
  EXPECT_GE(d->ack->at_ms, sent);
  // Taken at the next beat (a second at most), answered by one at once.
  EXPECT_LE(d->ack->at_ms - sent, 1000 + 500);
  EXPECT_EQ(stops.load(), 0);
  EXPECT_EQ(x.command({"EXISTS", k.signals}).integer, 0) << "every signal is taken at the beat";

  // The state moves forward only, and each move is beaten at once.
  beat->set_state(FleetState::Quiet);
  ASSERT_TRUE(test::wait_for([&] { return (d = read(beat->id())) && d->state == "quiet"; }, seconds(5)));
  beat->set_state(FleetState::Running);
  EXPECT_EQ(beat->state(), FleetState::Quiet);
  EXPECT_EQ(metrics.scrape().find("emq_daemon_state{state=\"quiet\"} 1") != std::string::npos, true)
      << metrics.scrape();
  beat->farewell();
}

TEST_F(HeartbeatTest, AFarewellLeavesNoKeyBehind) {
  ClaimLoop loop(q, server.options(), *handler, metrics);
  auto beat = heartbeat(loop);
  beat->start();
  ASSERT_TRUE(test::wait_for([&] { return read(beat->id()).has_value(); }, seconds(10)));
  x.command({"RPUSH", DaemonKeys(beat->id()).signals, "reload"});
  beat->farewell();
  EXPECT_EQ(x.command({"KEYS", "{emq}:daemon*"}).elements.size(), 0u);
  EXPECT_FALSE(read(beat->id()).has_value());
}

}  // namespace
}  // namespace echomq::daemon
