#include "queue_sampler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "echomq/job_id.h"
#include "echomq/stats.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

QueueSampler::QueueSampler(Params params, const ConnectionOptions& server, Metrics& metrics)
    : Periodic("queue sampler"), params_(std::move(params)), executor_(server, {}, &metrics), metrics_(metrics) {
  for (const std::string& q : params_.queues) keys_.emplace_back(q);
}

QueueSampler::~QueueSampler() {
  request_stop();
  join();
}

bool QueueSampler::server_answered(std::chrono::milliseconds within) const {
  const std::int64_t at = answered_at_.load();
  if (at == 0) return false;
  return Clock::now() - Clock::time_point(Clock::duration(at)) <= within;
}

std::chrono::milliseconds QueueSampler::tick() {
  std::vector<QueueStats> all;
  std::int64_t server_now_ms = 0;
  try {
    all = stats(executor_, keys_);
    // Ages by the server's clock, which every daemon shares: a daemon on a
    // host whose clock is off reports the same latency as the others.
    server_now_ms = executor_.server_time_ms();
  } catch (const Error& e) {
    if (!e.transient()) throw;  // Periodic logs it and tries again in a second
    // An outage is logged once, when it starts, not at every sample.
    if (!down_) spdlog::warn("queue sampler: the server does not answer: {}", e.what());
    down_ = true;
    answered_at_ = 0;
    metrics_.set_valkey_up(false);
    return params_.interval;
  }
  if (down_) spdlog::info("queue sampler: the server answers again");
  down_ = false;
  answered_at_ = Clock::now().time_since_epoch().count();
  metrics_.set_valkey_up(true);

  for (const QueueStats& s : all) {
    QueueMetrics& m = metrics_.queue(s.queue);
    m.pending->Set(static_cast<double>(s.pending));
    m.active->Set(static_cast<double>(s.active));
    m.delayed->Set(static_cast<double>(s.delayed));
    m.dead->Set(static_cast<double>(s.dead));
    double age_s = 0;  // empty, or a head id that is not minted and so cannot be dated
    if (s.head_pending) {
      if (auto minted = minted_at_ms(*s.head_pending)) {
        age_s = std::max<double>(0, static_cast<double>(server_now_ms - static_cast<std::int64_t>(*minted))) / 1e3;
      }
    }
    m.latency->Set(age_s);
  }
  return params_.interval;
}

}  // namespace echomq::daemon
