// A job's W3C trace context: the row's optional `traceparent` and
// `tracestate` fields (docs/protocol.md, "Trace context"). The wire checks
// only their lengths; every speaker checks the form here before it writes
// one, and a claimer that traces reads them for the jobs it claimed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"

namespace echomq {

inline constexpr std::size_t kTraceparentBytes = 55;
inline constexpr std::size_t kMaxTracestateBytes = 512;

struct TraceContext {
  std::string traceparent;  // "" when the job has none
  std::string tracestate;

  bool empty() const { return traceparent.empty(); }
};

// "" when `traceparent` is a W3C traceparent of version 00
// ("00-<32 hex trace id>-<16 hex span id>-<2 hex flags>", lower-case hex,
// neither id all zeros), else what is wrong with it.
std::string traceparent_problem(std::string_view traceparent);
// "" when `tracestate` fits the wire (at most 512 bytes of printable
// ASCII), else what is wrong with it. Its list members are the tracing
// library's to parse.
std::string tracestate_problem(std::string_view tracestate);
// The trace id of a traceparent that passed traceparent_problem.
std::string_view trace_id_of(std::string_view traceparent);

// The rows' trace contexts, one per job in its order, in one pipelined
// round trip (HMGET row traceparent tracestate). A row without a valid
// traceparent gives an empty context, so a peer's malformed field never
// reaches a handler. Throws Error as the executor does.
std::vector<TraceContext> read_trace_contexts(Executor& x, const QueueKeys& q, const std::vector<ClaimedJob>& jobs);

}  // namespace echomq
