// Settler (outcome -> transition -> what the server made of it), against a
// real valkey-server.
#include "settle.h"

#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "valkey_server.h"

namespace echomq::daemon {
namespace {

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

}  // namespace
}  // namespace echomq::daemon
