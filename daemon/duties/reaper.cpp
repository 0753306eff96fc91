#include "duties/reaper.h"

#include <spdlog/spdlog.h>

#include "echomq/transitions.h"

namespace echomq::daemon {

namespace {
constexpr std::chrono::seconds kTrimEvery{60};
// Bounds one tick even if other daemons keep the active set churning.
constexpr int kMaxRoundsPerTick = 100;
}  // namespace

Reaper::Reaper(const Config& config, const ConnectionOptions& server, Metrics& metrics, ReconnectPolicy reconnect)
    : Periodic("reaper"), config_(config), executor_(server, std::move(reconnect), &metrics), metrics_(metrics) {
  for (const QueueConfig& q : config.queues) keys_.emplace_back(q.name);
}

Reaper::~Reaper() {
  request_stop();
  join();
}

std::chrono::milliseconds Reaper::tick() {
  const bool trim = std::chrono::steady_clock::now() >= next_trim_;
  for (std::size_t i = 0; i < config_.queues.size(); ++i) {
    reap_queue(config_.queues[i], keys_[i]);
    if (trim) {
      std::int64_t gone = trim_dead(executor_, keys_[i], config_.queues[i].keep_dead_s * 1000, 0);
      if (gone > 0)
        spdlog::info("queue={} trimmed {} dead jobs older than {} s", keys_[i].queue, gone,
                     config_.queues[i].keep_dead_s);
    }
  }
  if (trim) next_trim_ = std::chrono::steady_clock::now() + kTrimEvery;
  return std::chrono::milliseconds(config_.reaper.interval_ms);
}

void Reaper::reap_queue(const QueueConfig& q, const QueueKeys& keys) {
  QueueMetrics& m = metrics_.queue(q.name);
  for (int round = 0; round < kMaxRoundsPerTick; ++round) {
    ReapResult r = reap(executor_, keys, q.max_attempts, config_.reaper.batch);
    if (r.requeued + r.dead == 0) return;
    m.reaped_requeued->Increment(static_cast<double>(r.requeued));
    m.reaped_dead->Increment(static_cast<double>(r.dead));
    spdlog::info("queue={} reaped {} expired leases: {} back to pending, {} dead", q.name, r.requeued + r.dead,
                 r.requeued, r.dead);
    if (r.requeued + r.dead < config_.reaper.batch) return;
  }
}

}  // namespace echomq::daemon
