// The span of one attempt of a job: a CONSUMER span `process <queue>`
// after OpenTelemetry's messaging conventions, whose parent is the row's
// trace context (a new trace when the row has none), and whose context the
// handler is given (TRACEPARENT, TRACESTATE) so that its own spans nest
// under it. A JobSpan made with no Tracing is inert and costs nothing: a
// job of a daemon that does not trace never makes one that is not.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace echomq::daemon {

// How an attempt ended, as the span's `messaging.echomq.job.outcome` says it.
enum class SpanOutcome { Completed, Retry, Dead, Released, LeaseLost };
const char* to_string(SpanOutcome outcome);

class JobSpan {
 public:
  JobSpan();  // inert
  JobSpan(JobSpan&&) noexcept;
  JobSpan& operator=(JobSpan&&) noexcept;
  ~JobSpan();  // an attempt never ended says it was released

  // The span's context in W3C form, for the handler; "" when inert.
  const std::string& traceparent() const;
  const std::string& tracestate() const;
  // Its trace id (32 hex), for the log lines of the job; "" when inert.
  std::string_view trace_id() const;

  // Ends the span once; `error` is the failure's text (none for Completed).
  void end(SpanOutcome outcome, std::string_view error = {});

  // The span itself (job_span_open.h makes one).
  struct Impl;
  explicit JobSpan(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace echomq::daemon
