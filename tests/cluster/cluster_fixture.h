// Shared set-up for the cluster suite: a real Valkey Cluster (three
// primaries, one replica each), queue names chosen so that each lands on
// the primary a test wants, emqd configs pointed at one node's URL, and the
// ledger the handlers write.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "echomq/cluster.h"
#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "ledger.h"
#include "valkey_cluster.h"
#include "wait_for.h"

namespace echomq::test {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline void report_figures(const std::string& scenario, const std::string& figures) {
  std::printf("[figures] %s: %s\n", scenario.c_str(), figures.c_str());
  std::fflush(stdout);
}

// A queue name whose slot the primary `node` owns now.
inline std::string queue_on(ValkeyCluster& cluster, std::size_t node, const std::string& stem) {
  for (int i = 0; i < 100000; ++i) {
    const std::string name = stem + std::to_string(i);
    if (cluster.owner_of(key_slot(name)) == node) return name;
  }
  throw std::runtime_error("no queue name found for node " + std::to_string(node));
}

class ClusterTest : public ::testing::Test {
 protected:
  ClusterTest() : x(cluster.options(0)) {}

  std::string queue_on(std::size_t node, const std::string& stem) { return test::queue_on(cluster, node, stem); }

  std::string config_head(std::size_t node, const std::string& extra = "") const {
    return "valkey:\n  url: " + cluster.url(node) + "\n  keyspace_events: true\n" + extra +
           "metrics:\n  listen: \"\"\nlog:\n  level: info\nreaper:\n  interval_ms: 100\n"
           "shutdown:\n  drain_timeout_s: 5\nqueues:\n";
  }
  static std::string ledger_queue(const std::string& name, int concurrency, std::int64_t lease_ms,
                                  const std::string& ledger, const std::string& then = ":",
                                  const std::string& more = "") {
    return "  - name: " + name + "\n    concurrency: " + std::to_string(concurrency) +
           "\n    lease_ms: " + std::to_string(lease_ms) + "\n" + more + "    handler:\n      type: exec\n" +
           ledger_handler_yaml(ledger, "d", then);
  }

  std::vector<std::string> put_many(const std::string& queue, int n) {
    QueueKeys q(queue);
    std::vector<std::string> ids;
    std::vector<ScriptCall> batch;
    for (int i = 0; i < n; ++i) {
      ids.push_back(mint_job_id());
      batch.push_back(enqueue_call(q, ids.back(), "x"));
    }
    for (const Reply& r : x.eval_batch(batch)) EXPECT_EQ(decode_enqueue(r), EnqueueResult::Enqueued);
    return ids;
  }

  // n jobs completed and none pending, active or delayed; errors (a node
  // away) are waited out.
  bool all_completed(const std::string& queue, std::int64_t n, milliseconds deadline) {
    return wait_for(
        [&] {
          try {
            QueueStats s = stats(x, QueueKeys(queue));
            return s.counters["completed"] >= n && s.pending + s.active + s.delayed == 0;
          } catch (const Error&) {
            return false;
          }
        },
        deadline);
  }

  // Every job ran at least once, none is left in any set.
  LedgerCounts expect_all_ran(const std::string& queue, const std::vector<std::string>& ids) {
    QueueStats s = stats(x, QueueKeys(queue));
    EXPECT_EQ(s.pending, 0) << queue;
    EXPECT_EQ(s.active, 0) << queue;
    EXPECT_EQ(s.delayed, 0) << queue;
    EXPECT_EQ(s.dead, 0) << queue;
    LedgerCounts c = read_ledger(ledger_path());
    std::size_t missing = 0;
    for (const std::string& id : ids) missing += c.runs.count(id) == 0;
    EXPECT_EQ(missing, 0u) << "enqueued jobs that never ran (" << queue << ")";
    return c;
  }

  std::string ledger_path() { return cluster.node(0).dir() + "/ledger.txt"; }

  ValkeyCluster cluster;
  Executor x;
};

}  // namespace echomq::test
