#include "echomq/trace_context.h"

namespace echomq {

namespace {

bool lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool all_zeros(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

}  // namespace

std::string traceparent_problem(std::string_view tp) {
  const char* const form = "expected a W3C traceparent, 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>";
  if (tp.size() != kTraceparentBytes) {
    return std::string(form) + " (55 bytes), but it is " + std::to_string(tp.size()) + " bytes";
  }
  if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return std::string(form) + ", but its dashes are misplaced";
  const std::string_view version = tp.substr(0, 2), trace_id = tp.substr(3, 32), span_id = tp.substr(36, 16),
                         flags = tp.substr(53, 2);
  if (!lower_hex(version) || !lower_hex(trace_id) || !lower_hex(span_id) || !lower_hex(flags)) {
    return std::string(form) + ", in lower-case hex";
  }
  if (version != "00") return "traceparent version " + std::string(version) + ": only version 00 is known";
  if (all_zeros(trace_id)) return "the traceparent's trace id is all zeros, which W3C trace context forbids";
  if (all_zeros(span_id)) return "the traceparent's span id is all zeros, which W3C trace context forbids";
  return "";
}

std::string tracestate_problem(std::string_view ts) {
  if (ts.size() > kMaxTracestateBytes) {
    return "a tracestate holds at most 512 bytes, but this one is " + std::to_string(ts.size());
  }
  for (char c : ts) {
    if (c < 0x20 || c > 0x7e) return "a tracestate is printable ASCII (W3C trace context), but this one is not";
  }
  return "";
}

std::string_view trace_id_of(std::string_view traceparent) { return traceparent.substr(3, 32); }

std::vector<TraceContext> read_trace_contexts(Executor& x, const QueueKeys& q, const std::vector<ClaimedJob>& jobs) {
  std::vector<TraceContext> out(jobs.size());
  if (jobs.empty()) return out;
  std::vector<Command> reads;
  reads.reserve(jobs.size());
  for (const ClaimedJob& j : jobs) reads.push_back({"HMGET", q.row(j.id), "traceparent", "tracestate"});
  std::vector<Reply> replies = x.pipeline(reads);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Reply& r = replies[i];
    if (r.type != Reply::Type::Array || r.elements.size() != 2) continue;
    Reply& tp = r.elements[0];
    Reply& ts = r.elements[1];
    if (tp.type != Reply::Type::String || !traceparent_problem(tp.str).empty()) continue;
    out[i].traceparent = std::move(tp.str);
    if (ts.type == Reply::Type::String && tracestate_problem(ts.str).empty()) out[i].tracestate = std::move(ts.str);
  }
  return out;
}

}  // namespace echomq
