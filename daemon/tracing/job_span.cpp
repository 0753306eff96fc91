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

// The row's two fields as the W3C propagator reads them, and the span's
// context as it writes them back.
class Fields : public otel::context::propagation::TextMapCarrier {
 public:
  Fields() = default;
  explicit Fields(const TraceContext& c) : traceparent(c.traceparent), tracestate(c.tracestate) {}

  string_view Get(string_view key) const noexcept override {
    if (key == "traceparent") return traceparent;
    if (key == "tracestate") return tracestate;
    return {};
  }
  void Set(string_view key, string_view value) noexcept override {
    if (key == "traceparent") traceparent.assign(value.data(), value.size());
    if (key == "tracestate") tracestate.assign(value.data(), value.size());
  }

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

JobSpan open_job_span(otel::trace::Tracer& tracer, const std::string& queue, const std::string& id,
                      std::int64_t attempt, std::size_t payload_bytes, const TraceContext& row) {
  otel::trace::propagation::HttpTraceContext w3c;
  otel::trace::StartSpanOptions options;
  options.kind = otel::trace::SpanKind::kConsumer;
  // Under the row's context; a row with none starts a trace, never under
  // whatever context the slot's thread might hold.
  otel::context::Context none;
  const Fields from_row(row);
  otel::context::Context parent = w3c.Extract(from_row, none);
  options.parent =
      otel::trace::GetSpan(parent)->GetContext().IsValid() ? parent : none.SetValue(otel::trace::kIsRootSpanKey, true);
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
  w3c.Inject(impl->context, otel::trace::SetSpan(none, impl->span));
  return JobSpan(std::move(impl));
}

}  // namespace echomq::daemon
