// A cluster over TLS (client ports, cluster bus and replication all TLS):
// the router and TLS compose. CLUSTER SLOTS names each node's TLS port to a
// TLS client; each node is verified against the CA, by its own address
// (the URL names an address, not a name).
#include "cluster_fixture.h"
#include "test_pki.h"

namespace echomq::test {
namespace {

TEST(ClusterTls, EveryShardRunsOverTlsFromOneNodesUrl) {
  TestPki pki;
  ValkeyCluster::Options o;
  o.replicas_per_primary = 0;
  ValkeyServer::Tls tls;
  tls.cert_file = pki.server().cert;
  tls.key_file = pki.server().key;
  tls.ca_file = pki.ca();
  o.tls = tls;
  ValkeyCluster cluster(o);
  ASSERT_EQ(cluster.url(0).rfind("valkeys://", 0), 0u);

  Executor x(cluster.options(0));
  const std::vector<std::string> queues = {queue_on(cluster, 0, "tls"), queue_on(cluster, 1, "tls"),
                                           queue_on(cluster, 2, "tls")};
  const int kJobs = 30;
  std::vector<ScriptCall> batch;  // one batch over three nodes
  for (const std::string& q : queues) {
    for (int i = 0; i < kJobs; ++i) batch.push_back(enqueue_call(QueueKeys(q), mint_job_id(), "x"));
  }
  for (const Reply& r : x.eval_batch(batch)) ASSERT_EQ(decode_enqueue(r), EnqueueResult::Enqueued);

  const std::string ledger = cluster.node(0).dir() + "/ledger.txt";
  std::string yaml = "valkey:\n  url: " + cluster.url(2) +
                     "\n  keyspace_events: true\n  tls:\n    ca_file: " + pki.ca() +
                     "\nmetrics:\n  listen: \"\"\nlog:\n  level: info\nshutdown:\n  drain_timeout_s: 5\nqueues:\n";
  for (const std::string& q : queues) {
    yaml += "  - name: " + q + "\n    concurrency: 2\n    handler:\n      type: exec\n" +
            ledger_handler_yaml(ledger, "d", ":");
  }
  EmqdProcess d(yaml);
  ASSERT_TRUE(d.wait_ready()) << d.log();
  for (const std::string& q : queues) {
    ASSERT_TRUE(wait_for(
        [&] {
          QueueStats s = stats(x, QueueKeys(q));
          return s.counters["completed"] == kJobs && s.pending + s.active == 0;
        },
        seconds(60)))
        << q << "\n"
        << d.log();
  }
  EXPECT_EQ(read_ledger(ledger).distinct(), queues.size() * kJobs);

  RunResult st = run_program({emq_binary(), "stats", queues[0], queues[1], queues[2]}, "",
                             {"EMQ_URL=" + cluster.url(1), "EMQ_TLS_CA=" + pki.ca()});
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find(queues[2]), std::string::npos) << st.out;
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
