#include "endpoints/metrics_endpoint.h"

#include <spdlog/spdlog.h>

#include "claim_loop.h"

namespace echomq::daemon {

namespace {
using std::chrono::milliseconds;

// Often enough for a dashboard and an alert, rare enough to cost the server
// nothing: one pipelined round trip for all queues.
constexpr milliseconds kSampleEvery{1000};

const char* const kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

std::vector<std::string> queue_names(const Config& c) {
  std::vector<std::string> names;
  for (const QueueConfig& q : c.queues) names.push_back(q.name);
  return names;
}
}  // namespace

MetricsEndpoint::MetricsEndpoint(const Config& config, const ConnectionOptions& server, Metrics& metrics,
                                 ReconnectPolicy reconnect)
    : metrics_(metrics),
      server_call_limit_(milliseconds(config.valkey.connect_timeout_ms + config.valkey.command_timeout_ms)) {
  // The sampler is also the daemon's own watch on the server: it puts the
  // queues back in {emq}:queues after a FLUSHALL and finds a server that
  // refuses writes. That must not depend on metrics being served.
  sampler_ = std::make_unique<QueueSampler>(QueueSampler::Params{queue_names(config), kSampleEvery}, server, metrics,
                                            std::move(reconnect));
  sampler_->start();
  if (config.metrics.listen.empty()) return;
  HttpServer::Params p;
  p.listen = config.metrics.listen;
  p.setting = "metrics.listen";
  p.taken_hint = ", or set metrics.listen to \"\" to turn the endpoint off";
  p.name = "metrics endpoint";
  p.routes["/metrics"] = [this] { return serve_metrics(); };
  p.routes["/healthz"] = [this] { return serve_health(); };
  http_ = std::make_unique<HttpServer>(std::move(p));
  http_->start();
  spdlog::info("metrics endpoint on {} (port {}): /metrics, /healthz", config.metrics.listen, http_->port());
}

MetricsEndpoint::~MetricsEndpoint() {
  http_.reset();
  sampler_.reset();
}

void MetricsEndpoint::watch(const std::vector<ClaimLoop*>& loops) {
  std::vector<Health::Loop> watched;
  for (const ClaimLoop* l : loops) watched.push_back(Health::watch(*l, server_call_limit_));
  sampler_->on_limits_change([loops](const std::string& queue) {
    for (ClaimLoop* l : loops) {
      if (l->queue().name == queue) l->limits_changed();
    }
  });
  std::lock_guard<std::mutex> lock(mutex_);
  health_.emplace(std::move(watched), [this] { return server_trouble(); });
}

std::string MetricsEndpoint::server_trouble() const {
  if (!sampler_) return "the server does not answer";
  // A sample hung past the command timeout counts as no answer.
  return sampler_->trouble(kSampleEvery + server_call_limit_);
}

void MetricsEndpoint::starting(std::string why) {
  std::lock_guard<std::mutex> lock(mutex_);
  starting_ = std::move(why);
}

HealthVerdict MetricsEndpoint::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!health_) return {false, "starting: " + starting_};
  return health_->check();
}

HealthVerdict MetricsEndpoint::liveness() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!health_) return {true, "starting"};
  return health_->loops();
}

HttpResponse MetricsEndpoint::serve_metrics() const {
  HttpResponse r;
  r.content_type = kPrometheusText;
  // From the answer /healthz gives, read now: the two never disagree.
  metrics_.set_valkey_up(server_trouble().empty());
  r.body = metrics_.scrape();
  return r;
}

HttpResponse MetricsEndpoint::serve_health() const {
  const HealthVerdict v = health();
  HttpResponse r;
  r.status = v.healthy ? 200 : 503;
  r.body = v.reason + "\n";
  return r;
}

}  // namespace echomq::daemon
