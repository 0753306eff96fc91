// Settler (outcome -> transition -> what the server made of it) and the
// LeaseRenewer, against a real valkey-server.
#include <gtest/gtest.h>

#include "claim_loop.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "duties/lease_renewer.h"
#include "settle.h"
#include "test_handler.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SettlerTest : public ::testing::Test {
 protected:
  SettlerTest() : keys("s"), settler(queue_config(), keys) {}
  static const QueueConfig& queue_config() {
    static const QueueConfig q = [] {
      QueueConfig c;
      c.name = "s";
      c.max_attempts = 3;
      c.backoff = {1000, 2.0, 60000, 0};
      return c;
    }();
    return q;
  }
  // One job enqueued and claimed: its lease.
  Lease claimed() {
    enqueue(x, keys, mint_job_id(), "p");
    const std::vector<ClaimedJob> got = claim(x, keys, {30000, 1, 0});
    EXPECT_EQ(got.size(), 1u);
    return {got.at(0).id, got.at(0).lease_epoch};
  }
  Settled settle(const Settlement& s) { return Settler::decode(s, x.eval_batch({settler.call(s)}).at(0)); }

  test::ValkeyServer server;
  Executor x{server.options()};
  QueueKeys keys;
  Settler settler;
};

TEST_F(SettlerTest, EachOutcomeBecomesItsTransition) {
  EXPECT_EQ(settle(Settlement::from_outcome(claimed(), 1, Outcome::complete("r"))), Settled::Completed);
  EXPECT_EQ(settle(Settlement::from_outcome(claimed(), 1, Outcome::failed(Outcome::Verdict::Retry, "e"))),
            Settled::Retried);
  EXPECT_EQ(settle(Settlement::from_outcome(claimed(), 1, Outcome::failed(Outcome::Verdict::Dead, "e"))),
            Settled::Dead);
  EXPECT_EQ(settle(Settlement::release(claimed(), 1)), Settled::Released);
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.delayed, 1);  // the retry waits out its backoff
  EXPECT_EQ(s.dead, 1);
  EXPECT_EQ(s.pending, 1);  // the released one
  EXPECT_EQ(s.active, 0);
}

TEST_F(SettlerTest, AStaleLeaseIsReportedLostAndChangesNothing) {
  const Lease lease = claimed();
  const Lease stale{lease.id, lease.epoch - 1};
  EXPECT_EQ(settle(Settlement::from_outcome(stale, 1, Outcome::complete("r"))), Settled::LeaseLost);
  EXPECT_EQ(stats(x, keys).active, 1);
  EXPECT_EQ(settle(Settlement::from_outcome(lease, 1, Outcome::complete("r"))), Settled::Completed);
}

TEST_F(SettlerTest, RetryDelaysFollowTheQueuesBackoff) {
  EXPECT_EQ(settler.retry_delay_ms(1), 1000);
  EXPECT_EQ(settler.retry_delay_ms(2), 2000);
  EXPECT_EQ(settler.retry_delay_ms(30), 60000);
}

class LeaseRenewerTest : public ::testing::Test {
 protected:
  LeaseRenewerTest() {
    q.name = "r";
    q.concurrency = 1;
    q.lease_ms = 300;  // renewed every 100 ms
    q.poll_max_ms = 20;
  }
  test::ValkeyServer server;
  Executor x{server.options()};
  QueueConfig q;
  QueueKeys keys{"r"};
  Metrics metrics{{"r"}, "test"};
  GateHandler handler;
};

TEST_F(LeaseRenewerTest, KeepsARunningJobsLeaseAliveLongPastLeaseMs) {
  enqueue(x, keys, mint_job_id(), "p");
  ClaimLoop loop(q, server.options(), handler, metrics);
  LeaseRenewer renewer({&loop}, server.options(), metrics);
  loop.start();
  renewer.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1; }, seconds(10)));
  // For five lease lengths, the reaper finds nothing expired.
  EXPECT_FALSE(test::wait_for([&] { return reap(x, keys, 5, 100).requeued > 0; }, milliseconds(1500)));
  handler.open();
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["completed"] == 1; }, seconds(10)));
  EXPECT_EQ(metrics.queue("r").lease_lost->Value(), 0);
}

TEST_F(LeaseRenewerTest, ALostLeaseStopsItsHandlerAndItsOutcomeIsDiscarded) {
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "wait-stop");
  ClaimLoop loop(q, server.options(), handler, metrics);
  LeaseRenewer renewer({&loop}, server.options(), metrics);
  loop.start();
  renewer.start();
  ASSERT_TRUE(test::wait_for([&] { return handler.running() == 1; }, seconds(10)));
  loop.stop_claiming();  // so the requeued job is not claimed again here
  // Another worker's reaper takes the lease: its deadline moved to the past.
  server.cli({"ZADD", keys.active, "1", id});
  ASSERT_EQ(reap(x, keys, 5, 100).requeued, 1);
  ASSERT_TRUE(test::wait_for(
      [&] {
        handler.poke();
        return handler.finished() == 1;
      },
      seconds(10)));
  EXPECT_TRUE(test::wait_for([&] { return metrics.queue("r").lease_lost->Value() == 1; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return loop.leased_count() == 0; }, seconds(5)));
  // Not failed, released or completed by this run: the reaper's requeue
  // stands, and the job waits in pending for its next run.
  QueueStats s = stats(x, keys);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.counters["completed"], 0);
  EXPECT_EQ(metrics.queue("r").failed_retry->Value(), 0);
  EXPECT_EQ(metrics.queue("r").released->Value(), 0);
}

}  // namespace
}  // namespace echomq::daemon
