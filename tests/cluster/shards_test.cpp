// emqd and emq on a three-primary cluster, pointed at one node's URL:
// queues on all three shards run to completion, whoever enqueued them (a
// client that is not ours, redis-py's cluster client running
// lua/enqueue.lua, and emq), and emq's operator commands work from any node.
#include <sstream>

#include "cluster_fixture.h"

namespace echomq::test {
namespace {

// Debian's interpreter, where python3-redis installs (not a pyenv's).
constexpr const char* kPython = "/usr/bin/python3";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

class ClusterShards : public ClusterTest {
 protected:
  RunResult emq(std::size_t node, const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {emq_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, input, {"EMQ_URL=" + cluster.url(node)});
  }
};

TEST_F(ClusterShards, QueuesOnAllThreeShardsRunToCompletionEnqueuedByRedisPyAndEmq) {
  const std::vector<std::string> queues = {queue_on(0, "shard"), queue_on(1, "shard"), queue_on(2, "shard")};
  const int kPerClient = 60;
  std::map<std::string, std::vector<std::string>> ids;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    // redis-py finds the queue's node by itself, from node i's address.
    RunResult py =
        run_program({kPython, std::string(EMQ_SOURCE_DIR) + "/tests/cluster/enqueue_redis_py.py", "127.0.0.1",
                     std::to_string(cluster.node(i).port()), std::string(EMQ_SOURCE_DIR) + "/lua/enqueue.lua",
                     queues[i], std::to_string(kPerClient)});
    ASSERT_EQ(py.code, 0) << py.err;
    ids[queues[i]] = lines_of(py.out);
    ASSERT_EQ(ids[queues[i]].size(), static_cast<std::size_t>(kPerClient));
    // emq through another node's URL: one NDJSON batch.
    std::string ndjson;
    for (int k = 0; k < kPerClient; ++k) {
      const std::string id = "JOB_emq-" + queues[i] + "-" + std::to_string(k);
      ndjson += "{\"id\":\"" + id + "\",\"payload\":\"from emq\"}\n";
      ids[queues[i]].push_back(id);
    }
    RunResult e = emq((i + 1) % cluster.size(), {"enqueue", queues[i], "--ndjson", "-"}, ndjson);
    ASSERT_EQ(e.code, 0) << e.err;
  }

  std::string yaml = config_head(4);  // a replica's URL: it is a node like any other
  for (const std::string& q : queues) yaml += ledger_queue(q, 4, 30000, ledger_path());
  EmqdProcess d(yaml);
  ASSERT_TRUE(d.wait_ready()) << d.log();
  for (const std::string& q : queues) {
    ASSERT_TRUE(all_completed(q, 2 * kPerClient, seconds(60))) << q << "\n" << d.log();
    LedgerCounts c = expect_all_ran(q, ids[q]);
    (void)c;
  }
  LedgerCounts c = read_ledger(ledger_path());
  EXPECT_EQ(c.distinct(), queues.size() * 2 * kPerClient);
  EXPECT_EQ(c.rerun(), 0u) << "no fault here: every job runs once";
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

TEST_F(ClusterShards, EmqStatsEnqueueInspectDeadPauseFromAnyNode) {
  const std::string q0 = queue_on(0, "cli"), q2 = queue_on(2, "cli");
  for (std::size_t n = 0; n < cluster.size(); ++n) {
    const std::string id = "JOB_n" + std::to_string(n);
    RunResult r = emq(n, {"enqueue", q2, "payload " + std::to_string(n), "--id", id});
    ASSERT_EQ(r.code, 0) << "node " << n << ": " << r.err;
    r = emq(n, {"inspect", q2, id});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("pending"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("payload " + std::to_string(n)), std::string::npos) << r.out;
  }
  // A dead job, made through the library on queue q0's node.
  QueueKeys q(q0);
  ASSERT_EQ(enqueue(x, q, "JOB_dies", "d"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> got = claim(x, q, ClaimArgs{});
  ASSERT_EQ(got.size(), 1u);
  FailArgs fa;
  fa.error = "broken on purpose";
  fa.permanent = true;
  ASSERT_EQ(fail(x, q, Lease{"JOB_dies", got[0].lease_epoch}, fa), FailResult::Dead);

  RunResult dead = emq(5, {"dead", "list", q0});
  ASSERT_EQ(dead.code, 0) << dead.err;
  EXPECT_NE(dead.out.find("JOB_dies"), std::string::npos) << dead.out;

  ASSERT_EQ(emq(3, {"pause", q2}).code, 0);
  EXPECT_TRUE(stats(x, QueueKeys(q2)).paused);
  RunResult st = emq(1, {"stats", q0, q2, "--json"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("\"" + q2 + "\""), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("\"" + q0 + "\""), std::string::npos) << st.out;
  ASSERT_EQ(emq(4, {"resume", q2}).code, 0);
  EXPECT_FALSE(stats(x, QueueKeys(q2)).paused);
  RunResult all = emq(2, {"stats"});
  ASSERT_EQ(all.code, 0) << all.err;
}

}  // namespace
}  // namespace echomq::test
