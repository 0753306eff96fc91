// /metrics and /healthz on metrics.listen: the HTTP server, the queue
// sampler that feeds the server-read gauges (and runs without metrics.listen
// too: see queue_sampler.h), and the health verdict, put together for the
// daemon. Serving starts before the server is reached, so
// a daemon that waits for Valkey already shows emq_valkey_up 0 and a 503.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "config/config_types.h"
#include "echomq/connection.h"
#include "endpoints/healthz.h"
#include "http/http_server.h"
#include "metrics.h"
#include "duties/queue_sampler.h"

namespace echomq::daemon {

class ClaimLoop;

class MetricsEndpoint {
 public:
  // Starts sampling, and binds metrics.listen (unless it is "") and serves.
  // Throws std::runtime_error when the address cannot be bound.
  MetricsEndpoint(const Config& config, const ConnectionOptions& server, Metrics& metrics,
                  ReconnectPolicy reconnect = {});
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // From now on health covers these loops, and a change of a queue's
  // limits, as the sampler reads them, wakes its loop; until then /healthz
  // says the daemon is starting. The loops must outlive this endpoint.
  void watch(const std::vector<ClaimLoop*>& loops);

  // Until watch(): what start-up waits on, for /healthz ("starting: ...").
  void starting(std::string why);

  // What /healthz answers.
  HealthVerdict health() const;
  // The loops alone, for the systemd watchdog: a server outage is ridden
  // out, not a reason to be killed.
  HealthVerdict liveness() const;

  // The bound port; 0 when the endpoint is off.
  int port() const { return http_ ? http_->port() : 0; }

 private:
  // "" while the server answers and takes writes; else what is wrong.
  std::string server_trouble() const;
  HttpResponse serve_metrics() const;
  HttpResponse serve_health() const;

  Metrics& metrics_;
  std::chrono::milliseconds server_call_limit_;
  std::unique_ptr<QueueSampler> sampler_;
  mutable std::mutex mutex_;
  std::optional<Health> health_;
  std::string starting_ = "waiting for the server";
  std::unique_ptr<HttpServer> http_;  // last: it calls into the members above
};

}  // namespace echomq::daemon
