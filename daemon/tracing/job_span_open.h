// Opening a JobSpan with the SDK's sampler and id generator, straight into
// the batcher's record: inside daemon/tracing only, so that no other part
// of emqd compiles OpenTelemetry's headers.
#pragma once

#include <cstdint>
#include <string>

#include "echomq/trace_context.h"
#include "opentelemetry/sdk/instrumentationscope/instrumentation_scope.h"
#include "opentelemetry/sdk/resource/resource.h"
#include "opentelemetry/sdk/trace/id_generator.h"
#include "opentelemetry/sdk/trace/processor.h"
#include "opentelemetry/sdk/trace/sampler.h"
#include "tracing/job_span.h"

namespace echomq::daemon {

// What a job's span is made with: the tracer provider's sampler, ids,
// resource and scope, and the batcher its record goes to. All outlive
// every JobSpan (Tracing stops after every job has ended).
struct SpanSource {
  opentelemetry::sdk::trace::Sampler& sampler;
  opentelemetry::sdk::trace::IdGenerator& ids;
  opentelemetry::sdk::trace::SpanProcessor& batcher;
  const opentelemetry::sdk::resource::Resource& resource;
  const opentelemetry::sdk::instrumentationscope::InstrumentationScope& scope;
};

JobSpan open_job_span(const SpanSource& source, const std::string& queue, const std::string& id, std::int64_t attempt,
                      std::size_t payload_bytes, const TraceContext& row);

}  // namespace echomq::daemon
