// emqd's spans (docs/operations.md, "Tracing"): OpenTelemetry's SDK, its
// OTLP/HTTP exporter behind emqd's batcher (span_batcher.h), and one JobSpan per
// attempt of a job. It exists only while `tracing.enabled` is true: a
// daemon that does not trace has none, and its claim loops and slots ask
// nothing of it (no read of the rows' contexts, no allocation per job).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "config/config_types.h"
#include "echomq/trace_context.h"
#include "tracing/job_span.h"

namespace prometheus {
class Counter;
}

namespace echomq::daemon {

// emq_trace_spans_dropped_total{reason}'s two series.
struct SpanDrops {
  prometheus::Counter* queue_full = nullptr;
  prometheus::Counter* export_failed = nullptr;
};

class Tracing {
 public:
  // Who the spans come from: service.version and service.instance.id.
  struct Origin {
    std::string version;
    std::string instance;
  };
  // Starts the SDK's export thread. Nothing is sent until a span ends, and
  // a collector that is down costs nothing but dropped spans.
  Tracing(const TracingConfig& config, const Origin& origin, SpanDrops drops);
  ~Tracing();
  Tracing(const Tracing&) = delete;
  Tracing& operator=(const Tracing&) = delete;

  // Opens the span of attempt `attempt` of job `id` of `queue`, whose
  // payload is `payload_bytes` long, under `row` (the row's context).
  JobSpan begin(const std::string& queue, const std::string& id, std::int64_t attempt, std::size_t payload_bytes,
                const TraceContext& row);

  // Sends what waits, for at most `flush_for`, then ends the export: the
  // spans still waiting are dropped and counted. Once; at shutdown, after
  // every job has ended.
  void stop(std::chrono::milliseconds flush_for);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace echomq::daemon
