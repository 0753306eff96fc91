// Limits on a cluster: a queue's limits live in its meta, on the queue's
// own shard. Two queues on two shards: emqd writes each queue's configured
// limits to that shard, max_active holds across two daemons (each handler
// records its start and end; the overlap is computed from the records), and
// emq limit, pointed at another node, changes the limit both daemons obey.
#include <cstdio>
#include <memory>

#include "cluster_fixture.h"
#include "echomq/connection.h"
#include "intervals.h"

namespace echomq::test {
namespace {

class ClusterLimits : public ClusterTest {
 protected:
  // HGET on the node itself, not through the cluster map: a key that is not
  // there is answered MOVED, so a value proves the key is on that node.
  Reply hget_on(std::size_t node, const std::string& key, const std::string& field) {
    Connection c = Connection::open(cluster.options(node));
    return c.command({"HGET", key, field});
  }
  static std::string capped_queue(const std::string& name, int max_active, const std::string& record) {
    return "  - name: " + name +
           "\n    concurrency: 8\n    lease_ms: 30000\n    limits: { max_active: " + std::to_string(max_active) +
           " }\n    handler:\n      type: exec\n" + interval_handler_yaml(record, "sleep 0.3");
  }
  RunResult emq(std::size_t node, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {emq_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, "", {"EMQ_URL=" + cluster.url(node)});
  }
};

TEST_F(ClusterLimits, MaxActiveIsWrittenToEachQueuesShardAndHoldsAcrossTwoDaemons) {
  const std::string a = queue_on(0, "lim"), b = queue_on(1, "lim");
  const std::string rec_a = cluster.node(0).dir() + "/intervals-a", rec_b = cluster.node(0).dir() + "/intervals-b";
  // Each daemon names a different node; neither is the other queue's shard.
  const std::string queues = capped_queue(a, 3, rec_a) + capped_queue(b, 2, rec_b);
  EmqdProcess d1(config_head(2) + queues);
  EmqdProcess d2(config_head(1) + queues);
  ASSERT_TRUE(d1.wait_ready()) << d1.log();
  ASSERT_TRUE(d2.wait_ready()) << d2.log();

  Reply ma = hget_on(0, QueueKeys(a).meta, "max_active");
  Reply mb = hget_on(1, QueueKeys(b).meta, "max_active");
  EXPECT_EQ(ma.str, "3") << "queue " << a << "'s meta on its shard (node 0)";
  EXPECT_EQ(mb.str, "2") << "queue " << b << "'s meta on its shard (node 1)";

  const int kJobs = 24;
  put_many(a, kJobs);
  put_many(b, kJobs);
  ASSERT_TRUE(all_completed(a, kJobs, seconds(120))) << d1.log() << d2.log();
  ASSERT_TRUE(all_completed(b, kJobs, seconds(120))) << d1.log() << d2.log();
  const auto jobs_a = read_intervals(rec_a), jobs_b = read_intervals(rec_b);
  ASSERT_EQ(jobs_a.size(), static_cast<std::size_t>(kJobs));
  ASSERT_EQ(jobs_b.size(), static_cast<std::size_t>(kJobs));
  const auto [most_a, mean_a] = overlap(jobs_a);
  const auto [most_b, mean_b] = overlap(jobs_b);
  // Sixteen slots per queue claim against the limit: it is the bound, and it
  // is reached.
  EXPECT_EQ(most_a, 3) << "max_active 3 across two daemons of 8 slots (" << a << ")";
  EXPECT_EQ(most_b, 2) << "max_active 2 across two daemons of 8 slots (" << b << ")";
  report_figures("cluster max_active 3 and 2, 2 daemons x 8 slots",
                 "most_a=" + std::to_string(most_a) + " mean_a=" + std::to_string(mean_a) +
                     " most_b=" + std::to_string(most_b) + " mean_b=" + std::to_string(mean_b));

  // emq limit through a node that owns neither queue: the change lands on
  // the queue's shard and both running daemons obey it at their next claim.
  RunResult r = emq(2, {"limit", a, "--max-active", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "limits of " + a + ": max_active 1\n");
  EXPECT_EQ(hget_on(0, QueueKeys(a).meta, "max_active").str, "1");
  r = emq(1, {"limit", a});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("max_active  1 (active now 0)"), std::string::npos) << r.out;

  ASSERT_EQ(std::rename(rec_a.c_str(), (rec_a + ".before").c_str()), 0);
  const int kMore = 8;
  put_many(a, kMore);
  ASSERT_TRUE(all_completed(a, kJobs + kMore, seconds(120))) << d1.log() << d2.log();
  const auto after = read_intervals(rec_a);
  ASSERT_EQ(after.size(), static_cast<std::size_t>(kMore));
  EXPECT_EQ(overlap(after).first, 1) << "emq limit --max-active 1 on the cluster";

  d1.signal(SIGTERM);
  d2.signal(SIGTERM);
  EXPECT_EQ(d1.wait_exit(seconds(15)), 0) << d1.log();
  EXPECT_EQ(d2.wait_exit(seconds(15)), 0) << d2.log();
}

}  // namespace
}  // namespace echomq::test
