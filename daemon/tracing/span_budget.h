// What keeps a slow or absent collector from costing a job anything: the
// spans between a job's end and the exporter are bounded (SpanBatcher's
// queue), and a span that does not fit, or fails to leave, is dropped and
// counted here (emq_trace_spans_dropped_total{reason}), with one log line
// per change rather than one per span.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "opentelemetry/sdk/trace/exporter.h"
#include "tracing/tracing.h"

namespace echomq::daemon {

// Shared by the batcher and the counted exporter; any thread.
class SpanBudget {
 public:
  SpanBudget(std::int64_t max_waiting, std::string collector, SpanDrops drops);

  // A span found `max_waiting` spans waiting: dropped (counted).
  void queue_full();
  // A span found room again.
  void queue_has_room();
  // The exporter's answer for `spans` of them; when refused, they are
  // dropped (counted).
  void exported(std::size_t spans, bool ok);

 private:
  const std::int64_t max_waiting_;
  const std::string collector_;  // the URL, for the log lines
  SpanDrops drops_;
  // Said once per change, not per span: a collector down for an hour is
  // one line, and one more when it is back.
  std::atomic<bool> full_{false};
  std::atomic<bool> failing_{false};
};

// Routes the SDK's own messages to emqd's debug log, and watches them for
// the one sign of a failed export the OTLP/HTTP exporter gives: it logs
// "[OTLP TRACE HTTP Exporter] ERROR: Export N trace span(s)" and returns
// success all the same (opentelemetry-cpp 1.19, synchronous export), so
// the counted exporter reads the message its own call caused, on its
// thread. Once, before the first export.
void install_sdk_log();

// `inner` (the OTLP/HTTP exporter) reporting each answer to the budget.
std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> counted_exporter(
    std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> inner, std::shared_ptr<SpanBudget> budget);

}  // namespace echomq::daemon
