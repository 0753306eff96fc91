// What keeps a slow or absent collector from costing a job anything: the
// spans between a job's end and the exporter are bounded, and a span that
// does not fit, or fails to leave, is dropped and counted
// (emq_trace_spans_dropped_total{reason}). The SDK's batch span processor
// would drop past its queue too, but silently; the bounded processor
// refuses first, so that every drop is counted here, and the exporter's
// answers free the room.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "opentelemetry/sdk/trace/exporter.h"
#include "opentelemetry/sdk/trace/processor.h"
#include "tracing/tracing.h"

namespace echomq::daemon {

// Shared by the two wrappers below; any thread.
class SpanBudget {
 public:
  SpanBudget(std::int64_t max_waiting, std::string collector, SpanDrops drops);

  // Room for one more span; false (counted) when the queue is full.
  bool take();
  // The exporter's answer for `spans` of them: their room is free again;
  // when refused, they are dropped (counted).
  void exported(std::size_t spans, bool ok);

 private:
  const std::int64_t max_waiting_;
  const std::string collector_;  // the URL, for the log lines
  SpanDrops drops_;
  std::atomic<std::int64_t> waiting_{0};
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

// `inner` (the batch span processor) behind the budget.
std::unique_ptr<opentelemetry::sdk::trace::SpanProcessor> bounded_processor(
    std::unique_ptr<opentelemetry::sdk::trace::SpanProcessor> inner, std::shared_ptr<SpanBudget> budget);
// `inner` (the OTLP/HTTP exporter) reporting each answer to the budget.
std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> counted_exporter(
    std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> inner, std::shared_ptr<SpanBudget> budget);

}  // namespace echomq::daemon
