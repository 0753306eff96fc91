// The per-queue core against a real valkey-server, with a handler in the
// test binary: the claim loop claims, the runner's slots run, outcomes are
// settled, and the drain gives back what no slot started.
#include "claim_loop.h"

#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "test_handler.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ClaimLoopTest : public ::testing::Test {
 protected:
  QueueConfig queue(const std::string& name, int concurrency, int prefetch) {
    QueueConfig q;
    q.name = name;
    q.concurrency = concurrency;
    q.prefetch = prefetch;
    q.poll_max_ms = 20;
    q.keep_completed_s = 60;  // keep rows, so results can be read back
    return q;
  }
  std::vector<std::string> fill(const QueueKeys& keys, int n, const std::string& payload = "p") {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(mint_job_id());
      enqueue(x, keys, ids.back(), payload);
    }
    return ids;
  }
  QueueStats now(const QueueKeys& keys) { return stats(x, keys); }
  // The server's connections that the loop opened (it names them "loop").
  ConnectionOptions loop_options() {
    ConnectionOptions o = server.options();
    o.client_name = "loop";
    return o;
  }
  int loop_connections() {
    const std::string list = server.cli({"CLIENT", "LIST"});
    int n = 0;
    for (std::size_t at = list.find("name=loop "); at != std::string::npos; at = list.find("name=loop ", at + 1)) ++n;
    return n;
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  Metrics metrics{{"q"}, "test"};
  GateHandler handler;
};

TEST_F(ClaimLoopTest, RunsEveryJobAndRecordsItsResultOnTheServer) {
  const QueueConfig q = queue("q", 4, 0);
  const QueueKeys keys("q");
  const std::vector<std::string> ids = fill(keys, 20);
  handler.open();
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 20; }, seconds(20)));
  const QueueStats s = now(keys);
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.active, 0);
  EXPECT_EQ(inspect(x, keys, ids[7])->fields.at("result"), "done:p");
  EXPECT_TRUE(test::wait_for([&] { return loop.leased_count() == 0; }, seconds(5)));
  EXPECT_EQ(metrics.queue("q").completed->Value(), 20);
  EXPECT_LE(handler.max_running(), 4);
}

// Short jobs ending together on many slots: their outcomes, handed to the
// loop while one of its turns is on the wire, ride in the next turn with the
// next claim, and none is lost or settled twice. The queue, drained that
// way, is still polled afterwards.
TEST_F(ClaimLoopTest, OutcomesOfJobsEndingTogetherAreEachSettledOnceAndTheDrainedQueueIsPolledAfter) {
  const QueueConfig q = queue("q", 8, 8);
  const QueueKeys keys("q");
  fill(keys, 400);
  handler.open();
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 400; }, seconds(30)));
  EXPECT_TRUE(test::wait_for([&] { return loop.leased_count() == 0; }, seconds(5)));
  EXPECT_EQ(metrics.queue("q").completed->Value(), 400);
  EXPECT_EQ(handler.finished(), 400);
  EXPECT_EQ(now(keys).active, 0);

  const std::vector<std::string> later = fill(keys, 1);
  ASSERT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 401; }, seconds(10)));
  EXPECT_EQ(inspect(x, keys, later[0])->fields.at("result"), "done:p");
  EXPECT_EQ(handler.finished(), 401);
}

TEST_F(ClaimLoopTest, FailedOutcomesRetryAfterTheBackoffOrDie) {
  QueueConfig q = queue("q", 2, 0);
  q.backoff = {60000, 2.0, 3600000, 0};  // a retry waits a minute: it stays delayed
  const QueueKeys keys("q");
  fill(keys, 1, "retry");
  const std::vector<std::string> dead = fill(keys, 1, "dead");
  handler.open();
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for(
      [&] {
        const QueueStats s = now(keys);
        return s.delayed == 1 && s.dead == 1;
      },
      seconds(20)));
  EXPECT_EQ(inspect(x, keys, dead[0])->fields.at("error"), "bad input");
  // The counters follow once the loop has booked the replies.
  EXPECT_TRUE(test::wait_for(
      [&] { return metrics.queue("q").failed_dead->Value() == 1 && metrics.queue("q").failed_retry->Value() == 1; },
      seconds(5)));
}

TEST_F(ClaimLoopTest, BlockedJobsEachGetTheirOwnSlotThroughChainedWakeUps) {
  const QueueConfig q = queue("q", 3, 0);
  const QueueKeys keys("q");
  fill(keys, 3);
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  // One claimed batch wakes one slot; each slot that takes a job wakes the
  // next, so all three blocked jobs run at once.
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 3; }, seconds(10))) << handler.running();
  handler.open();
  EXPECT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 3; }, seconds(10)));
}

TEST_F(ClaimLoopTest, PrefetchHoldsLeasesAheadOfTheFreeSlotsAndNoMore) {
  const QueueConfig q = queue("q", 1, 2);
  const QueueKeys keys("q");
  fill(keys, 6);
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1 && now(keys).active == 3; }, seconds(10)));
  // concurrency + prefetch leases, whatever the wait: the loop does not
  // claim past them.
  EXPECT_FALSE(test::wait_for([&] { return now(keys).active > 3; }, milliseconds(300)));
  EXPECT_EQ(loop.leased_count(), 3u);
  EXPECT_EQ(now(keys).pending, 3);
  handler.open();
  EXPECT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 6; }, seconds(10)));
}

// With prefetch, the jobs waiting keep the slot busy while their leases
// run down; the loop claims again once a prefetch's worth of room has
// opened, in one claim, rather than one job per finished job. Outcomes on
// the way still reach the server promptly.
TEST_F(ClaimLoopTest, WithPrefetchTheLoopRefillsAWholePrefetchInOneClaim) {
  const QueueConfig q = queue("q", 1, 3);
  const QueueKeys keys("q");
  fill(keys, 10);
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1 && now(keys).active == 4; }, seconds(10)));
  auto leases_after = [&](int finished) {
    handler.let_one();
    EXPECT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == finished; }, seconds(5)));
    EXPECT_TRUE(
        test::wait_for([&] { return handler.started().size() == static_cast<std::size_t>(finished + 1); }, seconds(5)));
    return now(keys).active;
  };
  // Two finished: their outcomes are recorded, no claim goes out yet.
  EXPECT_EQ(leases_after(1), 3);
  EXPECT_EQ(leases_after(2), 2);
  EXPECT_FALSE(test::wait_for([&] { return now(keys).active != 2; }, milliseconds(200)));
  // The third starts the last job claimed ahead: three more in one claim.
  handler.let_one();
  ASSERT_TRUE(test::wait_for([&] { return now(keys).active == 4; }, seconds(5)));
  EXPECT_EQ(now(keys).pending, 3);
  EXPECT_EQ(now(keys).counters["completed"], 3);
  handler.open();
  EXPECT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 10; }, seconds(10)));
}

// While the server works through one round trip, the next goes out on
// the loop's second connection: a finished job's outcome and a claim for
// its slot do not wait behind the claim already on the wire.
TEST_F(ClaimLoopTest, ASecondRoundTripGoesOutWhileTheFirstIsOnTheWire) {
  const QueueConfig q = queue("q", 1, 1);
  const QueueKeys keys("q");
  fill(keys, 10);
  ClaimLoop loop(q, loop_options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1 && now(keys).active == 2; }, seconds(10)));
  server.freeze();
  // The first job ends: its outcome and a claim for the room it left go
  // out, and the frozen server holds them on the wire.
  handler.let_one();
  EXPECT_TRUE(test::wait_for([&] { return loop.round_trips_on_wire() == 1; }, seconds(5)));
  // The second ends: its outcome does not wait for the first round trip.
  handler.let_one();
  EXPECT_TRUE(test::wait_for([&] { return loop.round_trips_on_wire() == 2; }, seconds(5)));
  server.thaw();
  ASSERT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 2; }, seconds(10)));
  EXPECT_TRUE(test::wait_for([&] { return handler.started().size() == 3u; }, seconds(5)));
  EXPECT_EQ(loop_connections(), 2);
  handler.open();
  EXPECT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 10; }, seconds(10)));
  EXPECT_EQ(handler.finished(), 10);
}

// An idle queue is polled on one connection: the second opens only when
// a turn is due while another is on the wire, which no poll of an empty
// queue causes.
TEST_F(ClaimLoopTest, AnIdleQueueIsPolledOnOneConnection) {
  const QueueConfig q = queue("q", 4, 4);
  ClaimLoop loop(q, loop_options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return server.calls("evalsha") >= 20; }, seconds(10)));
  EXPECT_EQ(loop_connections(), 1);
}

TEST_F(ClaimLoopTest, TheDrainReleasesJobsClaimedAheadAtOnceAndFinishesTheRunningOne) {
  const QueueConfig q = queue("q", 1, 3);
  const QueueKeys keys("q");
  fill(keys, 4);
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1 && loop.leased_count() == 4; }, seconds(10)));
  loop.stop_claiming();
  // The three waiting behind the running job go back to pending while it
  // still runs, instead of after it.
  ASSERT_TRUE(test::wait_for([&] { return now(keys).pending == 3; }, seconds(10)));
  EXPECT_EQ(handler.running(), 1);
  EXPECT_EQ(now(keys).active, 1);
  EXPECT_TRUE(test::wait_for([&] { return metrics.queue("q").released->Value() == 3; }, seconds(5)));
  handler.open();
  ASSERT_TRUE(test::wait_for([&] { return now(keys).counters["completed"] == 1; }, seconds(10)));
  loop.request_stop(seconds(5));
  loop.join();
  EXPECT_EQ(handler.started().size(), 1u);
  EXPECT_EQ(now(keys).pending, 3);
  EXPECT_EQ(now(keys).active, 0);
}

}  // namespace
}  // namespace echomq::daemon
