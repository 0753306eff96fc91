// The fleet registry on a cluster: an emqd reached through any node beats
// into the {emq} keys on the one primary that owns their slot (with
// {emq}:version and {emq}:queues), and `emq daemons`, quiet included,
// works through the URL of another node.
#include <nlohmann/json.hpp>

#include "cluster_fixture.h"
#include "echomq/daemons.h"
#include "echomq/keyspace.h"

namespace echomq::test {
namespace {

class ClusterFleet : public ClusterTest {};

TEST_F(ClusterFleet, TheRegistryLivesOnTheOwnerOfEmqAndEmqDaemonsReadsItThroughAnyNode) {
  const std::size_t owner = cluster.owner_of(key_slot(kDaemonsKey));
  const std::size_t other = (owner + 1) % 3;
  const std::string name = queue_on(other, "fleet");
  EmqdProcess d(config_head(other, "daemon:\n  name: cluster-d\n  beat_s: 0.5\n") +
                ledger_queue(name, 1, 30000, ledger_path()));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::optional<DaemonInfo> me;
  ASSERT_TRUE(wait_for(
      [&] {
        for (DaemonInfo& each : list_daemons(x, false).daemons) {
          if (each.pid == d.pid()) me = each;
        }
        return me.has_value();
      },
      seconds(20)))
      << d.log();
  EXPECT_EQ(me->queues, std::vector<std::string>{name});
  EXPECT_EQ(me->executor, "scripted");
  // On the owner of {emq}'s slot, and on no other primary.
  const DaemonKeys k(me->id);
  EXPECT_EQ(cluster.node(owner).cli({"EXISTS", k.hash}), "1\n");
  EXPECT_EQ(cluster.node(other).cli({"KEYS", "{emq}:daemon*"}), "\n") << "the daemon's own node holds none";

  RunResult r = run_program({emq_binary(), "--url", cluster.url(other), "daemons", "quiet", me->id});
  EXPECT_EQ(r.code, 0) << r.out << r.err << d.log();
  EXPECT_NE(r.out.find(me->id + ": quiet (answered in "), std::string::npos) << r.out;
  r = run_program({emq_binary(), "--url", cluster.url(other), "daemons", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["state"], "quiet") << r.out;
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_EQ(cluster.node(owner).cli({"EXISTS", k.hash}), "0\n") << "a clean stop leaves no trace";
}

}  // namespace
}  // namespace echomq::test
