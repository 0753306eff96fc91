// The library against a real cluster, through the URL of any one node: the
// slot arithmetic agrees with the server's, every transition reaches the
// queue's primary, and reads that span queues (stats) are split per node.
#include "cluster_fixture.h"

namespace echomq::test {
namespace {

class ClusterRouting : public ClusterTest {};

TEST_F(ClusterRouting, KeySlotAgreesWithALiveNode) {
  Connection c = Connection::open(cluster.options(0));
  std::vector<std::string> keys = {"{emq}:version", "emq:{a}:pending", "x{}y", "{}", "a{b}c{d}", "{{x}}"};
  for (int i = 0; i < 200; ++i) keys.push_back("emq:{q" + std::to_string(i * 7919) + "}:job:JOB_" + std::to_string(i));
  for (const std::string& k : keys) {
    EXPECT_EQ(c.command({"CLUSTER", "KEYSLOT", k}).integer, key_slot(k)) << k;
  }
}

TEST_F(ClusterRouting, EveryTransitionRunsOnTheQueuesPrimaryWhicheverNodeTheUrlNames) {
  const std::vector<std::string> queues = {queue_on(0, "r"), queue_on(1, "r"), queue_on(2, "r")};
  // Each node's URL, replicas included, reaches every queue.
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    Executor on(cluster.options(n));
    for (const std::string& name : queues) {
      QueueKeys q(name);
      const std::string id = mint_job_id();
      ASSERT_EQ(enqueue(on, q, id, "p" + std::to_string(n)), EnqueueResult::Enqueued) << name << " via node " << n;
      std::vector<ClaimedJob> got = claim(on, q, ClaimArgs{});
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].id, id);
      EXPECT_EQ(complete(on, q, Lease{id, got[0].lease_epoch}, 0, "ok"), CompleteResult::Completed);
    }
    EXPECT_FALSE(on.native()) << "the module is standalone only";
    ASSERT_NE(on.cluster_map(), nullptr);
    EXPECT_EQ(on.cluster_map()->covered(), 16384u);
  }
  // One stats call over three queues on three nodes.
  std::vector<QueueKeys> keys;
  for (const std::string& name : queues) keys.emplace_back(name);
  std::vector<QueueStats> s = stats(x, keys);
  ASSERT_EQ(s.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i].counters["completed"], static_cast<std::int64_t>(cluster.size())) << queues[i];
    EXPECT_EQ(s[i].pending + s[i].active, 0) << queues[i];
  }
  // {emq}:queues lives with {emq}:version, on the owner of {emq}.
  register_queues(x, queues);
  std::vector<std::string> known = known_queues(x);
  for (const std::string& name : queues) EXPECT_NE(std::find(known.begin(), known.end(), name), known.end());
  EXPECT_GT(x.server_time_ms(), 0);
}

TEST_F(ClusterRouting, ScriptsAreLoadedAgainOnANodeThatLostThem) {
  const std::string name = queue_on(1, "s");
  QueueKeys q(name);
  ASSERT_EQ(enqueue(x, q, mint_job_id(), "a"), EnqueueResult::Enqueued);
  const std::uint64_t loads = x.script_loads();
  cluster.node(1).cli({"SCRIPT", "FLUSH"});
  ASSERT_EQ(enqueue(x, q, mint_job_id(), "b"), EnqueueResult::Enqueued);
  EXPECT_GT(x.script_loads(), loads);
  EXPECT_EQ(stats(x, q).pending, 2);
}

TEST_F(ClusterRouting, NativeIsRefusedOnAClusterWithAWayOut) {
  ConnectionOptions o = cluster.options(0);
  o.executor = ExecutorChoice::Native;
  Executor native(o);
  try {
    native.ensure_connected();
    FAIL() << "native connected to a cluster";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("auto or scripted"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace echomq::test
