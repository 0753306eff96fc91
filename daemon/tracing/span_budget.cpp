#include "tracing/span_budget.h"

#include <prometheus/counter.h>
#include <spdlog/spdlog.h>

#include <string_view>

#include "opentelemetry/sdk/common/global_log_handler.h"

namespace echomq::daemon {

namespace sdktrace = opentelemetry::sdk::trace;
using opentelemetry::sdk::common::ExportResult;

SpanBudget::SpanBudget(std::int64_t max_waiting, std::string collector, SpanDrops drops)
    : max_waiting_(max_waiting), collector_(std::move(collector)), drops_(drops) {}

void SpanBudget::queue_full() {
  drops_.queue_full->Increment();
  if (!full_.exchange(true)) {
    spdlog::warn(
        "tracing: {} spans wait for the collector at {}; dropping new ones (emq_trace_spans_dropped_total"
        "{{reason=\"queue_full\"}}) until it takes them; jobs are not held back",
        max_waiting_, collector_);
  }
}

void SpanBudget::queue_has_room() {
  if (full_.load(std::memory_order_relaxed)) full_ = false;
}

void SpanBudget::exported(std::size_t spans, bool ok) {
  if (ok) {
    if (failing_.exchange(false)) spdlog::info("tracing: the collector at {} takes spans again", collector_);
    return;
  }
  drops_.export_failed->Increment(static_cast<double>(spans));
  if (!failing_.exchange(true)) {
    spdlog::warn(
        "tracing: the collector at {} did not take {} spans: dropped (emq_trace_spans_dropped_total"
        "{{reason=\"export_failed\"}}); jobs run on, and later batches are tried as they come",
        collector_, spans);
  }
}

namespace {

namespace sdklog = opentelemetry::sdk::common::internal_log;

// Set by the SDK's log line of a failed export, on the thread that exports.
thread_local bool t_export_failed = false;
constexpr std::string_view kExportFailed = "[OTLP TRACE HTTP Exporter] ERROR: Export ";

class SdkLog : public sdklog::LogHandler {
 public:
  void Handle(sdklog::LogLevel level, const char* file, int line, const char* msg,
              const opentelemetry::sdk::common::AttributeMap&) noexcept override {
    const std::string_view text = msg != nullptr ? msg : "";
    if (level == sdklog::LogLevel::Error && text.substr(0, kExportFailed.size()) == kExportFailed) {
      t_export_failed = true;
    }
    try {
      spdlog::debug("tracing: opentelemetry-cpp: {} ({}:{})", text, file != nullptr ? file : "", line);
    } catch (...) {
    }
  }
};

class CountedExporter : public sdktrace::SpanExporter {
 public:
  CountedExporter(std::unique_ptr<sdktrace::SpanExporter> inner, std::shared_ptr<SpanBudget> budget)
      : inner_(std::move(inner)), budget_(std::move(budget)) {}

  std::unique_ptr<sdktrace::Recordable> MakeRecordable() noexcept override { return inner_->MakeRecordable(); }
  ExportResult Export(
      const opentelemetry::nostd::span<std::unique_ptr<sdktrace::Recordable>>& spans) noexcept override {
    t_export_failed = false;
    const ExportResult result = inner_->Export(spans);
    budget_->exported(spans.size(), result == ExportResult::kSuccess && !t_export_failed);
    return result;
  }
  bool ForceFlush(std::chrono::microseconds timeout) noexcept override { return inner_->ForceFlush(timeout); }
  bool Shutdown(std::chrono::microseconds timeout) noexcept override { return inner_->Shutdown(timeout); }

 private:
  std::unique_ptr<sdktrace::SpanExporter> inner_;
  std::shared_ptr<SpanBudget> budget_;
};

}  // namespace

void install_sdk_log() {
  sdklog::GlobalLogHandler::SetLogHandler(opentelemetry::nostd::shared_ptr<sdklog::LogHandler>(new SdkLog));
  sdklog::GlobalLogHandler::SetLogLevel(sdklog::LogLevel::Warning);
}

std::unique_ptr<sdktrace::SpanExporter> counted_exporter(std::unique_ptr<sdktrace::SpanExporter> inner,
                                                         std::shared_ptr<SpanBudget> budget) {
  return std::make_unique<CountedExporter>(std::move(inner), std::move(budget));
}

}  // namespace echomq::daemon
