// Shared set-up for emqd end-to-end tests: a real server, a config built
// around it, the real emqd binary, and reads of the server's state.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>

#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "ledger.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The top of a config for `server`; queues follow.
inline std::string config_head(const ValkeyServer& server, const std::string& extra = "") {
  return "valkey:\n  url: " + server.url() + "\n  keyspace_events: true\n" + extra +
         "metrics:\n  listen: \"\"\n"
         "log:\n  level: debug\n"
         "reaper:\n  interval_ms: 100\n"
         "shutdown:\n  drain_timeout_s: 5\n"
         "queues:\n";
}

class E2E : public ::testing::Test {
 protected:
  E2E() : x(server.options()) {}
  // On a server started with `options` (the emq module loaded, for one).
  explicit E2E(ValkeyServer::Options options) : server(std::move(options)), x(server.options()) {}

  QueueStats stats_of(const std::string& queue) { return stats(x, QueueKeys(queue)); }
  std::int64_t completed(const std::string& queue) { return stats_of(queue).counters["completed"]; }
  std::map<std::string, std::string> row(const std::string& queue, const std::string& id) {
    auto r = inspect(x, QueueKeys(queue), id);
    return r ? r->fields : std::map<std::string, std::string>{};
  }
  std::string put(const std::string& queue, const std::string& payload) {
    std::string id = mint_job_id();
    enqueue(x, QueueKeys(queue), id, payload);
    return id;
  }
  bool settled(const std::string& queue, std::int64_t n, milliseconds deadline = seconds(30)) {
    return wait_for(
        [&] {
          QueueStats s = stats_of(queue);
          return s.counters["completed"] + s.dead >= n && s.pending + s.active + s.delayed == 0;
        },
        deadline);
  }
  std::string ledger_path() const { return server.dir() + "/ledger.txt"; }

  ValkeyServer server;
  Executor x;
};

}  // namespace echomq::test
