// The queue sampler: every interval, the depths and head job of every
// configured queue in one pipelined round trip, into emq_queue_jobs{state}
// and emq_queue_latency_seconds. Sampled on a timer rather than per scrape
// so that many scrapers (or a fast one) cost the server nothing more, and
// never per job. Its round trip doubles as the "does the server answer"
// probe of /healthz.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "periodic.h"

namespace echomq::daemon {

class QueueSampler : public Periodic {
 public:
  struct Params {
    std::vector<std::string> queues;
    std::chrono::milliseconds interval{1000};
  };

  QueueSampler(Params params, const ConnectionOptions& server, Metrics& metrics);
  ~QueueSampler() override;

  // Whether the last sample came back within `within` of now: false before
  // the first, after a failed one, and while one hangs past `within`.
  bool server_answered(std::chrono::milliseconds within) const;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  Params params_;
  std::vector<QueueKeys> keys_;
  Executor executor_;
  Metrics& metrics_;
  // steady_clock ticks of the last good sample; 0: none since the last failure.
  std::atomic<std::int64_t> answered_at_{0};
  bool down_ = false;  // tick() only: log an outage once, when it starts
};

}  // namespace echomq::daemon
