#include "tracing/job_span.h"

#include <array>
#include <chrono>
#include <utility>

#include "opentelemetry/common/key_value_iterable_view.h"
#include "opentelemetry/trace/propagation/http_trace_context.h"
#include "opentelemetry/trace/span_context_kv_iterable.h"
#include "opentelemetry/trace/span_metadata.h"
#include "tracing/job_span_open.h"
#include "tracing/span_record.h"

namespace echomq::daemon {

namespace otel = opentelemetry;
using otel::nostd::string_view;

namespace {

// The span's context in W3C form, for the handler.
struct Fields {
  std::string traceparent;
  std::string tracestate;
};

// An error's text as the span's status says it: enough to recognise it;
// the row keeps the whole of it.
constexpr std::size_t kStatusBytes = 1024;

}  // namespace

// A sampled span's record, from its start to its end, when it goes to
// the batcher; none for a span the sampler dropped.
struct JobSpan::Impl {
  std::unique_ptr<SpanRecord> record;
  otel::sdk::trace::SpanProcessor* batcher = nullptr;
  std::chrono::steady_clock::time_point start;
  Fields context;
  bool ended = false;
};

const char* to_string(SpanOutcome outcome) {
  switch (outcome) {
    case SpanOutcome::Completed: return "completed";
    case SpanOutcome::Retry: return "retry";
    case SpanOutcome::Dead: return "dead";
    case SpanOutcome::Released: return "released";
    case SpanOutcome::LeaseLost: return "lease_lost";
  }
  return "?";
}

JobSpan::JobSpan() = default;
JobSpan::JobSpan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JobSpan::JobSpan(JobSpan&&) noexcept = default;
JobSpan& JobSpan::operator=(JobSpan&&) noexcept = default;
JobSpan::~JobSpan() { end(SpanOutcome::Released); }

const std::string& JobSpan::traceparent() const {
  static const std::string none;
  return impl_ ? impl_->context.traceparent : none;
}

const std::string& JobSpan::tracestate() const {
  static const std::string none;
  return impl_ ? impl_->context.tracestate : none;
}

std::string_view JobSpan::trace_id() const {
  return impl_ && !impl_->context.traceparent.empty() ? trace_id_of(impl_->context.traceparent) : std::string_view();
}

void JobSpan::end(SpanOutcome outcome, std::string_view error) {
  if (!impl_ || impl_->ended) return;
  impl_->ended = true;
  if (!impl_->record) return;
  SpanRecord& span = *impl_->record;
  span.SetAttribute("messaging.echomq.job.outcome", to_string(outcome));
  if (outcome == SpanOutcome::Retry || outcome == SpanOutcome::Dead) {
    span.SetAttribute("error.type", to_string(outcome));
    const std::string_view text = error.substr(0, kStatusBytes);
    span.SetStatus(otel::trace::StatusCode::kError, string_view(text.data(), text.size()));
  }
  span.SetDuration(std::chrono::steady_clock::now() - impl_->start);
  impl_->batcher->OnEnd(std::move(impl_->record));
}

// The row's context as the span's parent: a traceparent that passed
// traceparent_problem (version 00, lower-case hex, ids not all zeros),
// so its fields are taken where they stand, with no context object,
// carrier or split per span.
otel::trace::SpanContext row_parent(const TraceContext& row) {
  using otel::trace::propagation::HttpTraceContext;
  const std::string_view tp = row.traceparent;
  return otel::trace::SpanContext(HttpTraceContext::TraceIdFromHex(string_view(tp.data() + 3, 32)),
                                  HttpTraceContext::SpanIdFromHex(string_view(tp.data() + 36, 16)),
                                  HttpTraceContext::TraceFlagsFromHex(string_view(tp.data() + 53, 2)), true,
                                  row.tracestate.empty() ? otel::trace::TraceState::GetDefault()
                                                         : otel::trace::TraceState::FromHeader(row.tracestate));
}

// The span's context in W3C form, written once: the handler's TRACEPARENT
// and the trace id of the job's log lines are views of it.
void write_context(const otel::trace::SpanContext& c, Fields& out) {
  char tp[kTraceparentBytes] = {'0', '0', '-'};
  c.trace_id().ToLowerBase16(otel::nostd::span<char, 32>(tp + 3, 32));
  tp[35] = '-';
  c.span_id().ToLowerBase16(otel::nostd::span<char, 16>(tp + 36, 16));
  tp[52] = '-';
  c.trace_flags().ToLowerBase16(otel::nostd::span<char, 2>(tp + 53, 2));
  out.traceparent.assign(tp, sizeof(tp));
  if (!c.trace_state()->Empty()) out.tracestate = c.trace_state()->ToHeader();
}

// The SDK tracer's steps (opentelemetry-cpp 1.19, sdk/src/trace/tracer.cc),
// without its per-span context lookup, span object, lock and the
// processor chain's wrapper record: the parent is the row's context or
// none (a new trace, never whatever the slot's thread holds), the sampler
// decides, the flags carry its decision alone (W3C trace context 1), and
// a recorded span writes straight into the batcher's record.
JobSpan open_job_span(const SpanSource& source, const std::string& queue, const std::string& id, std::int64_t attempt,
                      std::size_t payload_bytes, const TraceContext& row) {
  const otel::trace::SpanContext parent = row.empty() || !traceparent_problem(row.traceparent).empty()
                                              ? otel::trace::SpanContext::GetInvalid()
                                              : row_parent(row);
  const std::string name = "process " + queue;
  const std::array<std::pair<string_view, otel::common::AttributeValue>, 7> attributes{{
      {"messaging.system", "echomq"},
      {"messaging.operation.type", "process"},
      {"messaging.operation.name", "process"},
      {"messaging.destination.name", string_view(queue)},
      {"messaging.message.id", string_view(id)},
      {"messaging.message.body.size", static_cast<std::int64_t>(payload_bytes)},
      {"messaging.echomq.job.attempt", attempt},
  }};
  const otel::common::KeyValueIterableView<decltype(attributes)> view(attributes);

  const otel::trace::SpanId span_id = source.ids.GenerateSpanId();
  const otel::trace::TraceId trace_id = parent.IsValid() ? parent.trace_id() : source.ids.GenerateTraceId();
  otel::sdk::trace::SamplingResult sampled = source.sampler.ShouldSample(
      parent, trace_id, name, otel::trace::SpanKind::kConsumer, view, otel::trace::NullSpanContext());
  const otel::trace::TraceFlags flags(sampled.IsSampled() ? otel::trace::TraceFlags::kIsSampled : 0);
  const otel::trace::SpanContext context(trace_id, span_id, flags, false,
                                         sampled.trace_state ? sampled.trace_state
                                         : parent.IsValid()  ? parent.trace_state()
                                                             : otel::trace::TraceState::GetDefault());

  auto impl = std::make_unique<JobSpan::Impl>();
  write_context(context, impl->context);
  if (!sampled.IsRecording()) return JobSpan(std::move(impl));

  auto record = std::make_unique<SpanRecord>();
  record->SetName(name);
  record->SetInstrumentationScope(source.scope);
  record->SetIdentity(context, parent.IsValid() ? parent.span_id() : otel::trace::SpanId());
  for (const auto& [key, value] : attributes) record->SetAttribute(key, value);
  if (sampled.attributes) {
    for (const auto& [key, value] : *sampled.attributes) record->SetAttribute(key, value);
  }
  record->SetSpanKind(otel::trace::SpanKind::kConsumer);
  record->SetStartTime(otel::common::SystemTimestamp(std::chrono::system_clock::now()));
  impl->start = std::chrono::steady_clock::now();
  record->SetResource(source.resource);
  source.batcher.OnStart(*record, parent);
  impl->record = std::move(record);
  impl->batcher = &source.batcher;
  return JobSpan(std::move(impl));
}

}  // namespace echomq::daemon
