// Lease renewal: every lease_ms/3, one batched `extend` per queue for all
// the jobs this daemon holds there, pipelined across queues. A lease found
// lost stops its job: another worker may be running it now.
#pragma once

#include <chrono>
#include <vector>

#include "claim_loop.h"
#include "echomq/executor.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

class LeaseRenewer : public Periodic {
 public:
  LeaseRenewer(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
               ReconnectPolicy reconnect = {});
  ~LeaseRenewer() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  struct Due {
    ClaimLoop* loop;
    std::chrono::steady_clock::time_point next;
  };
  std::vector<Due> queues_;
  Executor executor_;
  Metrics& metrics_;
};

}  // namespace echomq::daemon
