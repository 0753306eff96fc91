#include "tracing/job_span.h"

#include "opentelemetry/context/context.h"
#include "opentelemetry/trace/context.h"
#include "opentelemetry/trace/propagation/http_trace_context.h"
#include "opentelemetry/trace/span_metadata.h"
#include "tracing/job_span_open.h"

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

struct JobSpan::Impl {
  otel::nostd::shared_ptr<otel::trace::Span> span;
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
  otel::trace::Span& span = *impl_->span;
  span.SetAttribute("messaging.echomq.job.outcome", to_string(outcome));
  if (outcome == SpanOutcome::Retry || outcome == SpanOutcome::Dead) {
    span.SetAttribute("error.type", to_string(outcome));
    const std::string_view text = error.substr(0, kStatusBytes);
    span.SetStatus(otel::trace::StatusCode::kError, string_view(text.data(), text.size()));
  }
  span.End();
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

// A row with no context starts a trace, never under whatever context the
// slot's thread might hold; made once (a Context is immutable).
const otel::context::Context& new_trace() {
  static const otel::context::Context root = otel::context::Context().SetValue(otel::trace::kIsRootSpanKey, true);
  return root;
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

JobSpan open_job_span(otel::trace::Tracer& tracer, const std::string& queue, const std::string& id,
                      std::int64_t attempt, std::size_t payload_bytes, const TraceContext& row) {
  otel::trace::StartSpanOptions options;
  options.kind = otel::trace::SpanKind::kConsumer;
  if (row.empty() || !traceparent_problem(row.traceparent).empty()) {
    options.parent = new_trace();
  } else {
    options.parent = row_parent(row);
  }
  auto impl = std::make_unique<JobSpan::Impl>();
  impl->span = tracer.StartSpan("process " + queue,
                                {{"messaging.system", "echomq"},
                                 {"messaging.operation.type", "process"},
                                 {"messaging.operation.name", "process"},
                                 {"messaging.destination.name", string_view(queue)},
                                 {"messaging.message.id", string_view(id)},
                                 {"messaging.message.body.size", static_cast<std::int64_t>(payload_bytes)},
                                 {"messaging.echomq.job.attempt", attempt}},
                                options);
  write_context(impl->span->GetContext(), impl->context);
  return JobSpan(std::move(impl));
}

}  // namespace echomq::daemon
