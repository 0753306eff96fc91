// The queue sampler against a real valkey-server: the server-read gauges
// (emq_queue_jobs{state}, emq_queue_latency_seconds, emq_valkey_up) follow
// what is in the sets, and an outage shows.
#include "duties/queue_sampler.h"

#include <gtest/gtest.h>

#include "echomq/groups.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "minted_id.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using test::id_minted_at;

QueueSampler::Params every_50ms(std::vector<std::string> queues) { return {std::move(queues), milliseconds(50)}; }

bool scrape_has(const Metrics& m, const std::string& line) {
  return ("\n" + m.scrape()).find("\n" + line + "\n") != std::string::npos;
}

struct Depths {
  double pending, active, delayed, dead;
  bool operator==(const Depths& o) const {
    return pending == o.pending && active == o.active && delayed == o.delayed && dead == o.dead;
  }
};

Depths depths(Metrics& m, const std::string& q) {
  QueueMetrics& qm = m.queue(q);
  return {qm.pending->Value(), qm.active->Value(), qm.delayed->Value(), qm.dead->Value()};
}

class QueueSamplerTest : public ::testing::Test {
 protected:
  test::ValkeyServer server;
  Executor x{server.options()};
};

TEST_F(QueueSamplerTest, EveryStateOfEveryQueueInOneSample) {
  QueueKeys busy("busy");
  for (int i = 0; i < 4; ++i) enqueue(x, busy, mint_job_id(), "p");
  enqueue(x, busy, mint_job_id(), "later", {0, x.server_time_ms() + 3600 * 1000});
  std::vector<ClaimedJob> got = claim(x, busy, {30000, 2, 0});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(fail(x, busy, {got[0].id, got[0].lease_epoch}, {"bad input", 5, 0, true}), FailResult::Dead);

  Metrics metrics({"busy", "idle"}, "test");
  QueueSampler sampler(every_50ms({"busy", "idle"}), server.options(), metrics);
  sampler.start();
  const Depths want_busy{2, 1, 1, 1};
  const Depths want_idle{0, 0, 0, 0};
  ASSERT_TRUE(test::wait_for([&] { return depths(metrics, "busy") == want_busy; }, seconds(5)))
      << "pending " << depths(metrics, "busy").pending << " active " << depths(metrics, "busy").active;
  EXPECT_TRUE(depths(metrics, "idle") == want_idle);
  EXPECT_TRUE(scrape_has(metrics, "emq_queue_jobs{queue=\"busy\",state=\"dead\"} 1")) << metrics.scrape();
  EXPECT_TRUE(scrape_has(metrics, "emq_valkey_up 1"));

  // The gauges follow the sets: claim the rest and they move.
  claim(x, busy, {30000, 10, 0});
  const Depths drained{0, 3, 1, 1};
  EXPECT_TRUE(test::wait_for([&] { return depths(metrics, "busy") == drained; }, seconds(5)));
}

// emq_unique_duplicates_total follows the queue's stats duplicates, which
// a unique duplicate by any producer counts: all of it at the first
// sample, then what it gained.
TEST_F(QueueSamplerTest, UniqueDuplicatesFollowTheQueuesCounter) {
  QueueKeys q("uniq");
  EnqueueOptions o;
  o.job.unique = UniqueKey{"digest:ada", std::nullopt, 0};
  ASSERT_EQ(enqueue(x, q, mint_job_id(), "p", o), EnqueueResult::Enqueued);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(enqueue(x, q, mint_job_id(), "p", o), EnqueueResult::Duplicate);

  Metrics metrics({"uniq"}, "test");
  QueueSampler sampler(every_50ms({"uniq"}), server.options(), metrics);
  sampler.start();
  ASSERT_TRUE(
      test::wait_for([&] { return scrape_has(metrics, "emq_unique_duplicates_total{queue=\"uniq\"} 3"); }, seconds(5)))
      << metrics.scrape();
  for (int i = 0; i < 2; ++i) ASSERT_EQ(enqueue(x, q, mint_job_id(), "p", o), EnqueueResult::Duplicate);
  EXPECT_TRUE(
      test::wait_for([&] { return scrape_has(metrics, "emq_unique_duplicates_total{queue=\"uniq\"} 5"); }, seconds(5)))
      << metrics.scrape();
}

// emq_group_jobs has series for the groups that hold keys only: a group
// `emq groups` lists for its policy alone (paused before its first job)
// has none, so a group that drains loses its series whatever its policy.
TEST_F(QueueSamplerTest, GroupSeriesAreForGroupsHoldingKeysOnly) {
  QueueKeys q("tenants");
  for (const auto& [group, jobs] : std::vector<std::pair<std::string, int>>{{"acme", 2}, {"bolt", 1}}) {
    EnqueueOptions o;
    o.group = group;
    for (int i = 0; i < jobs; ++i) ASSERT_EQ(enqueue(x, q, mint_job_id(), "p", o), EnqueueResult::Enqueued);
  }
  group_set(x, q, "zeta", "paused=1");
  ASSERT_EQ(read_groups(x, q, kGroupSeries).top.size(), 3u) << "zeta is listed, at 0 and 0";

  Metrics metrics({"tenants"}, "test");
  QueueSampler sampler(every_50ms({"tenants"}), server.options(), metrics);
  sampler.start();
  ASSERT_TRUE(test::wait_for([&] { return scrape_has(metrics, "emq_groups{queue=\"tenants\"} 2"); }, seconds(5)))
      << metrics.scrape();
  const std::string scrape = metrics.scrape();
  EXPECT_NE(scrape.find("group=\"acme\""), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("group=\"bolt\""), std::string::npos) << scrape;
  EXPECT_EQ(scrape.find("group=\"zeta\""), std::string::npos) << scrape;
}

TEST_F(QueueSamplerTest, LatencyIsTheAgeOfTheHeadJobByTheServersClock) {
  QueueKeys q("lat");
  const std::int64_t now = x.server_time_ms();
  const std::string old_id = id_minted_at(now - 7000);
  ASSERT_EQ(minted_at_ms(old_id), static_cast<std::uint64_t>(now - 7000));
  enqueue(x, q, old_id, "oldest");
  enqueue(x, q, id_minted_at(now - 1000), "newer");

  Metrics metrics({"lat"}, "test");
  QueueSampler sampler(every_50ms({"lat"}), server.options(), metrics);
  sampler.start();
  prometheus::Gauge* latency = metrics.queue("lat").latency;
  ASSERT_TRUE(test::wait_for([&] { return latency->Value() >= 7.0; }, seconds(5))) << latency->Value();
  EXPECT_LT(latency->Value(), 12.0) << "the oldest job is about 7 s old, not older";

  // The next head is the newer job, about 1 s old; then the queue is empty: 0.
  std::vector<ClaimedJob> first = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(first.at(0).id, old_id);
  EXPECT_TRUE(test::wait_for([&] { return latency->Value() >= 1.0 && latency->Value() < 6.0; }, seconds(5)))
      << latency->Value();
  claim(x, q, {30000, 1, 0});
  EXPECT_TRUE(test::wait_for([&] { return latency->Value() == 0.0; }, seconds(5))) << latency->Value();
}

TEST_F(QueueSamplerTest, AHeadIdThatWasNotMintedCannotBeDatedAndReadsZero) {
  QueueKeys q("custom");
  enqueue(x, q, "JOB_order-1234", "p");
  Metrics metrics({"custom"}, "test");
  metrics.queue("custom").latency->Set(99);  // so that 0 is something the sampler wrote
  QueueSampler sampler(every_50ms({"custom"}), server.options(), metrics);
  sampler.start();
  ASSERT_TRUE(test::wait_for([&] { return metrics.queue("custom").pending->Value() == 1; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return metrics.queue("custom").latency->Value() == 0.0; }, seconds(5)));
}

TEST_F(QueueSamplerTest, AnOutageShowsAndTheSamplerComesBack) {
  QueueKeys q("outage");
  enqueue(x, q, mint_job_id(), "p");
  Metrics metrics({"outage"}, "test");
  QueueSampler sampler(every_50ms({"outage"}), server.options(), metrics);
  EXPECT_FALSE(sampler.server_answered(seconds(60))) << "no answer before the first sample";
  sampler.start();
  ASSERT_TRUE(test::wait_for([&] { return sampler.server_answered(seconds(1)); }, seconds(5)));
  EXPECT_TRUE(scrape_has(metrics, "emq_valkey_up 1"));

  server.stop();
  EXPECT_TRUE(test::wait_for([&] { return !sampler.server_answered(seconds(1)); }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return scrape_has(metrics, "emq_valkey_up 0"); }, seconds(5)));
  EXPECT_EQ(metrics.queue("outage").pending->Value(), 1) << "the last known depth stays while the server is away";

  server.start();
  EXPECT_TRUE(test::wait_for([&] { return sampler.server_answered(seconds(1)); }, seconds(10)));
  EXPECT_TRUE(test::wait_for([&] { return scrape_has(metrics, "emq_valkey_up 1"); }, seconds(5)));
}

TEST_F(QueueSamplerTest, AFrozenServerStopsCountingAsAnswering) {
  ConnectionOptions quick = server.options();
  quick.command_timeout = milliseconds(300);
  Metrics metrics({"frozen"}, "test");
  QueueSampler sampler(every_50ms({"frozen"}), quick, metrics);
  sampler.start();
  ASSERT_TRUE(test::wait_for([&] { return sampler.server_answered(milliseconds(500)); }, seconds(5)));
  server.freeze();
  // A hung call neither fails nor answers: the age of the last answer says it.
  EXPECT_TRUE(test::wait_for([&] { return !sampler.server_answered(milliseconds(500)); }, seconds(5)));
  server.thaw();
  EXPECT_TRUE(test::wait_for([&] { return sampler.server_answered(milliseconds(500)); }, seconds(10)));
}

}  // namespace
}  // namespace echomq::daemon
