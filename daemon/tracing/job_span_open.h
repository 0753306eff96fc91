// Opening a JobSpan with the SDK's tracer: inside daemon/tracing only, so
// that no other part of emqd compiles OpenTelemetry's headers.
#pragma once

#include <cstdint>
#include <string>

#include "echomq/trace_context.h"
#include "opentelemetry/trace/tracer.h"
#include "tracing/job_span.h"

namespace echomq::daemon {

JobSpan open_job_span(opentelemetry::trace::Tracer& tracer, const std::string& queue, const std::string& id,
                      std::int64_t attempt, std::size_t payload_bytes, const TraceContext& row);

}  // namespace echomq::daemon
