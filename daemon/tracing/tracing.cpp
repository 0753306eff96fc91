#include "tracing/tracing.h"

#include <spdlog/spdlog.h>

#include "opentelemetry/exporters/otlp/otlp_http_exporter_factory.h"
#include "opentelemetry/exporters/otlp/otlp_http_exporter_options.h"
#include "opentelemetry/sdk/resource/resource.h"
#include "opentelemetry/sdk/trace/samplers/parent_factory.h"
#include "opentelemetry/sdk/trace/samplers/trace_id_ratio_factory.h"
#include "opentelemetry/sdk/trace/tracer.h"
#include "opentelemetry/sdk/trace/tracer_provider.h"
#include "opentelemetry/sdk/trace/tracer_provider_factory.h"
#include "tracing/job_span_open.h"
#include "tracing/span_batcher.h"
#include "tracing/span_budget.h"

namespace echomq::daemon {

namespace otel = opentelemetry;
namespace sdktrace = opentelemetry::sdk::trace;
namespace otlp = opentelemetry::exporter::otlp;

namespace {

std::unique_ptr<sdktrace::Sampler> sampler(const TracingConfig& config) {
  std::unique_ptr<sdktrace::Sampler> ratio = sdktrace::TraceIdRatioBasedSamplerFactory::Create(config.sample_ratio);
  if (!config.parent_based) return ratio;
  return sdktrace::ParentBasedSamplerFactory::Create(std::shared_ptr<sdktrace::Sampler>(std::move(ratio)));
}

// The exporter's options: the OTEL_EXPORTER_OTLP_* variables, as the SDK
// reads them (timeout, TLS files, compression), under the URL and headers
// the configuration resolved.
otlp::OtlpHttpExporterOptions exporter_options(const TracingConfig& config) {
  otlp::OtlpHttpExporterOptions options;
  options.url = config.url;
  options.content_type = otlp::HttpRequestContentType::kBinary;
  options.console_debug = false;
  for (const auto& [name, value] : config.headers) {
    options.http_headers.erase(name);
    options.http_headers.emplace(name, value);
  }
  return options;
}

}  // namespace

struct Tracing::Impl {
  std::unique_ptr<sdktrace::TracerProvider> provider;
  otel::nostd::shared_ptr<otel::trace::Tracer> tracer;
  sdktrace::SpanExporter* exporter = nullptr;  // the OTLP one, owned inside provider
  SpanBatcher* batcher = nullptr;              // owned inside provider
  bool stopped = false;
};

Tracing::Tracing(const TracingConfig& config, const Origin& origin, SpanDrops drops) : impl_(std::make_unique<Impl>()) {
  install_sdk_log();

  auto budget = std::make_shared<SpanBudget>(config.max_queue_size, config.url, drops);
  std::unique_ptr<sdktrace::SpanExporter> otlp_exporter =
      otlp::OtlpHttpExporterFactory::Create(exporter_options(config));
  impl_->exporter = otlp_exporter.get();
  SpanBatcher::Limits limits;
  limits.max_queue = static_cast<std::size_t>(config.max_queue_size);
  limits.max_batch = static_cast<std::size_t>(config.max_export_batch_size);
  limits.delay = std::chrono::milliseconds(config.schedule_delay_ms);
  auto processor = std::make_unique<SpanBatcher>(counted_exporter(std::move(otlp_exporter), budget), limits, budget);
  impl_->batcher = processor.get();

  const auto resource = otel::sdk::resource::Resource::Create({{"service.name", config.service_name},
                                                               {"service.version", origin.version},
                                                               {"service.instance.id", origin.instance}});
  impl_->provider = sdktrace::TracerProviderFactory::Create(std::move(processor), resource, sampler(config));
  impl_->tracer = impl_->provider->GetTracer("emqd", origin.version);
}

Tracing::~Tracing() { stop(std::chrono::milliseconds(0)); }

// The provider's tracer is the SDK's: its sampler, ids, resource and
// scope make every job's span, which goes straight to the batcher.
JobSpan Tracing::begin(const std::string& queue, const std::string& id, std::int64_t attempt, std::size_t payload_bytes,
                       const TraceContext& row) {
  auto& tracer = static_cast<sdktrace::Tracer&>(*impl_->tracer);
  const SpanSource source{tracer.GetSampler(), tracer.GetIdGenerator(), *impl_->batcher, tracer.GetResource(),
                          tracer.GetInstrumentationScope()};
  return open_job_span(source, queue, id, attempt, payload_bytes, row);
}

// The batcher's shutdown joins its export thread, which may be
// waiting on a collector that hangs for the whole export timeout: the
// exporter is shut first, which ends its request at once, and what is
// left fails to export, counted, instead of holding the daemon's exit.
void Tracing::stop(std::chrono::milliseconds flush_for) {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // The SDK reads a timeout of 0 as none at all.
  if (flush_for.count() > 0) impl_->provider->ForceFlush(flush_for);
  impl_->exporter->Shutdown(std::chrono::milliseconds(100));
  impl_->provider->Shutdown();
}

}  // namespace echomq::daemon
