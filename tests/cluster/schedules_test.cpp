// A schedule on a cluster: enqueue_cron goes to the shard of the
// schedule's queue, whichever node a daemon was pointed at. Two daemons run
// the same every: 1s schedule; over some seconds each tick gives exactly
// one job (the rows in the queue checked against the ticks the daemons'
// logs report, and against the marker on the queue's shard).
#include <set>

#include "cluster_fixture.h"
#include "echomq/connection.h"
#include "schedule_ledger.h"

namespace echomq::test {
namespace {

class ClusterSchedules : public ClusterTest {
 protected:
  // The ids of the queue's rows the schedule made (pending: no daemon
  // consumes the queue).
  std::set<std::string> scheduled_rows(const std::string& queue, const std::string& name) {
    QueueKeys q(queue);
    std::set<std::string> out;
    for (const Reply& id : x.command({"ZRANGE", q.pending, "0", "-1"}).elements) {
      if (x.command({"HGET", q.row(id.str), "schedule"}).str == name) out.insert(id.str);
    }
    return out;
  }
};

TEST_F(ClusterSchedules, TwoDaemonsFireOneJobPerTickOnTheQueuesShard) {
  const std::string ticks = queue_on(2, "ticks"), work = queue_on(0, "work");
  const std::string rest = "  - name: " + work +
                           "\n    handler: { type: exec, command: [/bin/true] }\n"
                           "schedules:\n  - { name: beat, queue: " +
                           ticks + ", every: 1s }\n";
  // Neither daemon is pointed at the queue's shard.
  EmqdProcess a(config_head(0) + rest);
  EmqdProcess b(config_head(4) + rest);
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  ASSERT_TRUE(wait_for([&] { return scheduled_rows(ticks, "beat").size() >= 8; }, seconds(60))) << a.log() << b.log();
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  ASSERT_EQ(a.wait_exit(seconds(30)), 0) << a.log();
  ASSERT_EQ(b.wait_exit(seconds(30)), 0) << b.log();

  const std::set<std::string> rows = scheduled_rows(ticks, "beat");
  const std::map<std::int64_t, std::string> fires = one_fire_per_tick({a.log(), b.log()});
  expect_one_job_per_tick(fires, rows);
  EXPECT_GE(rows.size(), 8u);
  // The marker is on the queue's shard (asked of that node alone: a key
  // elsewhere is answered MOVED), naming the last tick and its job.
  Connection shard = Connection::open(cluster.options(2));
  ASSERT_FALSE(fires.empty());
  EXPECT_EQ(shard.command({"HGET", QueueKeys(ticks).cron, "beat"}).str,
            std::to_string(fires.rbegin()->first) + ":" + fires.rbegin()->second);
  EXPECT_EQ(shard.command({"HEXISTS", QueueKeys(ticks).schedules, "beat"}).integer, 1) << "the definition, published";
  report_figures("cluster every: 1s, 2 daemons", "ticks=" + std::to_string(fires.size()) +
                                                     " rows=" + std::to_string(rows.size()) +
                                                     " fired_by_a=" + std::to_string(fires_logged(a.log()).size()) +
                                                     " fired_by_b=" + std::to_string(fires_logged(b.log()).size()));
}

}  // namespace
}  // namespace echomq::test
