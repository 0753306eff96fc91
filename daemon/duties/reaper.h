// The reaper: every reaper.interval_ms, `reap` for each configured queue,
// again while a full batch came back, so a backlog of expired leases clears
// in one round. Every daemon runs one; the script makes concurrent reapers
// safe. Once a minute it also trims dead jobs older than keep_dead_s.
#pragma once

#include <chrono>
#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

class Reaper : public Periodic {
 public:
  Reaper(const Config& config, const ConnectionOptions& server, Metrics& metrics, ReconnectPolicy reconnect = {});
  ~Reaper() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  void reap_queue(const QueueConfig& q, const QueueKeys& keys);

  const Config& config_;
  std::vector<QueueKeys> keys_;
  Executor executor_;
  Metrics& metrics_;
  std::chrono::steady_clock::time_point next_trim_{};
};

}  // namespace echomq::daemon
