// The reaper against a real valkey-server, on its own thread as emqd runs
// it: a lease that expired is a failure counted, the job back in pending
// or dead at max_attempts, in the row, the queue's counters and the
// daemon's metrics; a backlog clears in one round; old dead jobs go.
#include "duties/reaper.h"

#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

class ReaperTest : public ::testing::Test {
 protected:
  ReaperTest() {
    config.reaper.interval_ms = 20;
    config.queues.push_back(queue("q"));
  }
  static QueueConfig queue(const std::string& name) {
    QueueConfig q;
    q.name = name;
    q.max_attempts = 2;
    return q;
  }
  // Claims n pending jobs of `k` with a lease of a millisecond, and waits
  // until the server's clock has passed it: expired leases.
  std::vector<ClaimedJob> claim_expired(const QueueKeys& k, int n) {
    std::vector<ClaimedJob> got = claim(x, k, {1, n, 0});
    const std::int64_t claimed_at = x.server_time_ms();
    EXPECT_TRUE(test::wait_for([&] { return x.server_time_ms() > claimed_at + 1; }, seconds(5)));
    return got;
  }
  std::map<std::string, std::string> row(const std::string& id) { return inspect(x, keys, id).value().fields; }

  test::ValkeyServer server;
  Executor x{server.options()};
  Config config;
  const QueueKeys keys{"q"};
};

TEST_F(ReaperTest, AnExpiredLeaseIsAFailureAndTheJobGoesBackToPendingThenDeadAtMaxAttempts) {
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "p");
  Metrics metrics({"q"}, "test");
  QueueMetrics& m = metrics.queue("q");
  Reaper reaper(config, server.options(), metrics);
  reaper.start();

  ASSERT_EQ(claim_expired(keys, 1).size(), 1u);
  ASSERT_TRUE(test::wait_for([&] { return stats(x, keys).pending == 1; }, seconds(5)));
  EXPECT_EQ(stats(x, keys).active, 0);
  EXPECT_EQ(row(id).at("state"), "pending");
  EXPECT_EQ(row(id).at("failures"), "1");
  EXPECT_EQ(row(id).at("error"), "lease expired");
  EXPECT_TRUE(test::wait_for([&] { return m.reaped_requeued->Value() == 1; }, seconds(5)));
  EXPECT_EQ(m.reaped_dead->Value(), 0);

  // The second attempt is the last (max_attempts 2): its expiry is death.
  ASSERT_EQ(claim_expired(keys, 1).size(), 1u);
  ASSERT_TRUE(test::wait_for([&] { return stats(x, keys).dead == 1; }, seconds(5)));
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.pending + s.active, 0);
  EXPECT_EQ(s.counters.at("reaped"), 2);
  EXPECT_EQ(row(id).at("state"), "dead");
  EXPECT_EQ(row(id).at("failures"), "2");
  EXPECT_TRUE(test::wait_for([&] { return m.reaped_dead->Value() == 1; }, seconds(5)));
  EXPECT_EQ(m.reaped_requeued->Value(), 1);
}

TEST_F(ReaperTest, ALiveLeaseIsLeftAlone) {
  enqueue(x, keys, mint_job_id(), "live");
  ASSERT_EQ(claim(x, keys, {600000, 1, 0}).size(), 1u);
  enqueue(x, keys, mint_job_id(), "expires");
  ASSERT_EQ(claim_expired(keys, 1).size(), 1u);
  Metrics metrics({"q"}, "test");
  Reaper reaper(config, server.options(), metrics);
  reaper.start();
  ASSERT_TRUE(test::wait_for([&] { return metrics.queue("q").reaped_requeued->Value() == 1; }, seconds(5)));
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.active, 1) << "the lease that runs for ten minutes yet";
  EXPECT_EQ(s.pending, 1);
}

// The next round is an hour away, so every lease back in pending went in
// the first: one round reaps batch after batch while they come back full.
TEST_F(ReaperTest, ABacklogOfExpiredLeasesClearsInOneRound) {
  config.reaper.interval_ms = 3600 * 1000;
  config.reaper.batch = 2;
  for (int i = 0; i < 7; ++i) enqueue(x, keys, mint_job_id(), "p");
  ASSERT_EQ(claim_expired(keys, 7).size(), 7u);
  Metrics metrics({"q"}, "test");
  Reaper reaper(config, server.options(), metrics);
  reaper.start();
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).pending == 7; }, seconds(5)));
  EXPECT_EQ(stats(x, keys).active, 0);
  EXPECT_TRUE(test::wait_for([&] { return metrics.queue("q").reaped_requeued->Value() == 7; }, seconds(5)));
}

// The trim runs in the first round, queue after queue in config order: by
// the time the second queue is trimmed, the first has had its turn.
TEST_F(ReaperTest, DeadJobsOlderThanKeepDeadAreTrimmedAndYoungerOnesKept) {
  config.queues = {queue("kept"), queue("brief")};
  config.queues[1].keep_dead_s = 0;
  const QueueKeys kept("kept"), brief("brief");
  std::map<std::string, std::string> dead;
  for (const QueueKeys* k : {&kept, &brief}) {
    enqueue(x, *k, mint_job_id(), "p");
    const ClaimedJob job = claim(x, *k, {30000, 1, 0}).at(0);
    ASSERT_EQ(fail(x, *k, {job.id, job.lease_epoch}, {"bad input", 5, 0, true}), FailResult::Dead);
    dead[k->queue] = job.id;
  }
  const std::int64_t died_by = x.server_time_ms();
  ASSERT_TRUE(test::wait_for([&] { return x.server_time_ms() > died_by; }, seconds(5)));

  Metrics metrics({"kept", "brief"}, "test");
  Reaper reaper(config, server.options(), metrics);
  reaper.start();
  ASSERT_TRUE(test::wait_for([&] { return stats(x, brief).dead == 0; }, seconds(5)));
  EXPECT_FALSE(inspect(x, brief, dead["brief"])) << "the row goes with it";
  EXPECT_EQ(stats(x, kept).dead, 1) << "keep_dead_s 604800: a week";
  EXPECT_TRUE(inspect(x, kept, dead["kept"]));
}

}  // namespace
}  // namespace echomq::daemon
