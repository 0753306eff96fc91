// The address of a job's trace in the operator's tracing tool: a template
// given as --trace-url ('https://tracing.example/trace/{trace_id}') with
// the trace id of the row's traceparent put in. emq web links a job's
// trace through it; emq inspect prints it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "echomq/stats.h"

namespace echomq::cli {

// "" when `tmpl` is a template --trace-url takes: http:// or https://, a
// host, {trace_id} at least once and no other placeholder, no credentials
// (every page shows it), and nothing a URL must percent-encode. Else what
// is wrong with it.
std::string trace_url_problem(const std::string& tmpl);

// `tmpl` (without a problem) with each {trace_id} replaced by `trace_id`,
// 32 lower-case hex digits: nothing to encode.
std::string trace_url(const std::string& tmpl, std::string_view trace_id);

// A row's trace as emq shows it, from its traceparent field.
struct JobTrace {
  std::string trace_id;  // "" when the field is not a W3C traceparent
  std::string problem;   // then, what is wrong with it
  std::string url;       // "" without a template (or without a trace id)
};
// nullopt when the row has no traceparent. `tmpl`: "" or a template
// without a problem.
std::optional<JobTrace> job_trace(const JobRow& row, const std::string& tmpl);

}  // namespace echomq::cli
