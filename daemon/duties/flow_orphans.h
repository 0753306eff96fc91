// The orphan watch: parents of this daemon's queues that wait on a child
// that can no longer tell them (its row is gone, or it completed or died
// without its outbox entry: a speaker that knows nothing of flows settled
// it), and ids left in a waiting set whose row was deleted by hand.
// Nothing would ever release such a parent; this makes it seen:
// the emq_flow_orphans gauge per queue and one log line per orphan found,
// naming the parent, the child and what to do (docs/operations.md).
// It only reads.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

class FlowOrphans : public Periodic {
 public:
  FlowOrphans(const Config& config, const ConnectionOptions& server, Metrics& metrics, ReconnectPolicy reconnect = {});
  ~FlowOrphans() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  // The parents of one queue found waiting on an orphan, each once, of
  // its oldest waiting parents (ZRANGE's reply).
  std::set<std::string> scan(const QueueKeys& q, const Reply& parents);
  // The ids of the queue's waiting set whose row is gone, each logged once.
  std::set<std::string> rowless(const QueueKeys& q, const std::vector<std::string>& ids);

  const Config& config_;
  std::vector<QueueKeys> keys_;
  Executor executor_;
  Metrics& metrics_;
  std::set<std::string> reported_;  // "<parent ref> <child ref>" already logged
};

}  // namespace echomq::daemon
