// The scheduler against a real valkey-server, on its own thread as emqd
// runs it: two daemons' schedulers racing enqueue exactly one job per tick;
// on start only the latest missed tick fires, within misfire_grace, and the
// others are counted missed; a new schedule fires no tick from before it.
#include "duties/scheduler.h"

#include <gtest/gtest.h>

#include <numeric>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "process_probe.h"
#include "schedule_ledger.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

constexpr std::int64_t kHour = 3600 * 1000;

class SchedulerTest : public ::testing::Test {
 protected:
  static ScheduleConfig schedule(const std::string& name, std::int64_t every_ms) {
    ScheduleConfig s;
    s.name = name;
    s.queue = "sched";
    s.every_ms = every_ms;
    s.payload = "tick";
    return s;
  }
  // The latest hourly tick, read once it is `past_ms` old and the next is
  // at least 5 s away, so that a test of under five seconds sees no other.
  std::int64_t this_hour(std::int64_t past_ms = 0) {
    std::int64_t now = 0;
    EXPECT_TRUE(test::wait_for(
        [&] {
          now = x.server_time_ms();
          return now % kHour > past_ms && now % kHour < kHour - 5000;
        },
        seconds(10)));
    return now - now % kHour;
  }
  // Runs an hourly schedule with that misfire grace on a scheduler of its
  // own: its series.
  ScheduleMetrics run_hourly(std::int64_t misfire_grace_ms) {
    ScheduleConfig s = schedule("hourly", kHour);
    s.misfire_grace_ms = misfire_grace_ms;
    scheduler_ = std::make_unique<Scheduler>(std::vector<ScheduleConfig>{s}, server.options(), metrics_);
    scheduler_->start();
    return metrics_.schedule("sched", "hourly");
  }
  std::vector<std::string> pending_ids() {
    std::vector<std::string> ids;
    for (const Reply& r : x.command({"ZRANGE", keys.pending, "0", "-1"}).elements) ids.push_back(r.str);
    return ids;
  }
  std::string marker(const std::string& name) { return x.command({"HGET", keys.cron, name}).str; }
  // A round ends by setting the next fire: once it reads the hour after
  // `tick`, the first round's fires and counts are all in.
  static bool round_over(const ScheduleMetrics& m, std::int64_t tick) {
    return test::wait_for([&] { return m.next_fire->Value() == static_cast<double>(tick + kHour) / 1000.0; },
                          seconds(10));
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  const QueueKeys keys{"sched"};

 private:
  Metrics metrics_{{}, "test"};
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, TwoSchedulersRacingEnqueueExactlyOneJobPerTick) {
  test::LogCapture log;
  const ScheduleConfig s = schedule("fast", 100);
  Metrics a({}, "test"), b({}, "test");
  Scheduler first({s}, server.options(), a);
  Scheduler second({s}, server.options(), b);
  first.start();
  second.start();
  ASSERT_TRUE(test::wait_for([&] { return stats(x, keys).pending >= 6; }, seconds(20)));
  first.request_stop();
  second.request_stop();
  first.join();
  second.join();

  const std::vector<std::string> lines = log.lines();
  const std::string joined = std::accumulate(lines.begin(), lines.end(), std::string(),
                                             [](std::string all, const std::string& l) { return all + l + "\n"; });
  const std::map<std::int64_t, std::string> fires = test::one_fire_per_tick({joined});
  std::set<std::string> fired_ids;
  for (const auto& [tick, id] : fires) {
    EXPECT_EQ(tick % 100, 0) << tick;
    fired_ids.insert(id);
  }
  const std::vector<std::string> rows = pending_ids();
  EXPECT_EQ(fired_ids, std::set<std::string>(rows.begin(), rows.end())) << "every job is one tick's, and back";
  const ScheduleMetrics ma = a.schedule("sched", "fast"), mb = b.schedule("sched", "fast");
  EXPECT_EQ(ma.enqueued->Value() + mb.enqueued->Value(), static_cast<double>(rows.size()));
  EXPECT_GE(ma.enqueued->Value() + ma.already->Value(), 1) << "the first took part";
  EXPECT_GE(mb.enqueued->Value() + mb.already->Value(), 1) << "the second took part";
  EXPECT_EQ(x.command({"HGET", keys.schedules, "fast"}).str, schedule_definition(s)) << "published for tools";
}

// A schedule with a group: each fire's job waits in its group's turn, never
// in pending, and a group-aware claim takes it from there and counts it.
TEST_F(SchedulerTest, AScheduledJobWithAGroupIsClaimedFromItsGroup) {
  ScheduleConfig s = schedule("grouped", 100);
  s.group = "cust.42";
  Metrics m({}, "test");
  Scheduler one({s}, server.options(), m);
  one.start();
  const std::string gq = keys.gq("cust.42");
  ASSERT_TRUE(test::wait_for([&] { return x.command({"ZCARD", gq}).integer >= 2; }, seconds(20)));
  one.request_stop();
  one.join();

  EXPECT_TRUE(pending_ids().empty()) << "a grouped fire never waits in pending";
  EXPECT_EQ(x.command({"ZSCORE", keys.gidx, "cust.42"}).str, std::to_string(x.command({"ZCARD", gq}).integer));
  const std::vector<ClaimedJob> jobs = claim(x, keys, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(x.command({"HGET", keys.row(jobs[0].id), "group"}).str, "cust.42");
  EXPECT_EQ(x.command({"HGET", keys.row(jobs[0].id), "schedule"}).str, "grouped");
  EXPECT_EQ(x.command({"ZSCORE", gq, jobs[0].id}).type, Reply::Type::Nil) << "claimed out of its group's zset";
  EXPECT_NE(x.command({"ZSCORE", keys.gact("cust.42"), jobs[0].id}).type, Reply::Type::Nil)
      << "counted in its group's active set";
  EXPECT_NE(x.command({"HGET", keys.schedules, "grouped"}).str.find("\"group\":\"cust.42\""), std::string::npos)
      << "published for tools, so emq schedule fire sends its jobs to the group too";
}

TEST_F(SchedulerTest, OnStartOnlyTheLatestMissedTickFiresAndTheEarlierOnesAreCountedMissed) {
  const std::int64_t tick = this_hour();
  // The last fire was five hours ago: four ticks went by unfired since.
  x.command({"HSET", keys.cron, "hourly", std::to_string(tick - 5 * kHour) + ":" + mint_job_id()});
  const ScheduleMetrics m = run_hourly(2 * kHour);
  ASSERT_TRUE(round_over(m, tick));
  EXPECT_EQ(m.enqueued->Value(), 1);
  EXPECT_EQ(m.missed->Value(), 4);
  const std::vector<std::string> rows = pending_ids();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(marker("hourly"), std::to_string(tick) + ":" + rows[0]);
}

TEST_F(SchedulerTest, TicksLaterThanMisfireGraceAreCountedMissedAndNotFired) {
  const std::int64_t tick = this_hour(1000);
  const std::string last_fire = std::to_string(tick - 5 * kHour) + ":" + mint_job_id();
  x.command({"HSET", keys.cron, "hourly", last_fire});
  const ScheduleMetrics m = run_hourly(1000);
  ASSERT_TRUE(round_over(m, tick));
  EXPECT_EQ(m.missed->Value(), 5) << "four in between, and the latest, too late";
  EXPECT_EQ(m.enqueued->Value(), 0);
  EXPECT_EQ(stats(x, keys).pending, 0);
  EXPECT_EQ(marker("hourly"), last_fire) << "only a fire moves the marker";
}

TEST_F(SchedulerTest, ANewScheduleFiresNoTickFromBeforeItExisted) {
  const std::int64_t tick = this_hour(1000);
  const ScheduleMetrics m = run_hourly(1000);
  ASSERT_TRUE(round_over(m, tick));
  EXPECT_EQ(m.enqueued->Value(), 0);
  EXPECT_EQ(m.missed->Value(), 0) << "a tick before the schedule existed was never due";
  EXPECT_EQ(stats(x, keys).pending, 0);
  EXPECT_EQ(x.command({"HEXISTS", keys.cron, "hourly"}).integer, 0);
}

}  // namespace
}  // namespace echomq::daemon
