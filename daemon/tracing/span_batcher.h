// emqd's batch span processor: an ended span waits in a bounded queue and
// leaves in a batch of `max_batch` spans as soon as that many wait, or
// with whatever waits once the oldest has waited `delay`, on one export
// thread: the batching processor as OpenTelemetry's specification
// describes it. The SDK's own (opentelemetry-cpp 1.19) exports whenever
// its queue holds any span, so a busy daemon sent a request for every few
// spans (77 on average at 17,000 jobs/s; about one per job at 300 jobs/s
// of an exec handler), each costing emqd and the collector far more than
// its spans (bench/emqbench/tracing.py, docs/decisions.md).
//
// A span that finds `max_queue` spans waiting is dropped at once and
// counted (SpanBudget): a job's end never waits for room.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "opentelemetry/sdk/trace/exporter.h"
#include "opentelemetry/sdk/trace/processor.h"
#include "tracing/span_budget.h"

namespace echomq::daemon {

class SpanBatcher : public opentelemetry::sdk::trace::SpanProcessor {
 public:
  struct Limits {
    std::size_t max_queue = 2048;           // spans waiting, besides the batch on its way
    std::size_t max_batch = 512;            // spans a request carries at most
    std::chrono::milliseconds delay{5000};  // the longest a span waits for its batch to fill
  };

  // Starts the export thread.
  SpanBatcher(std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> exporter, Limits limits,
              std::shared_ptr<SpanBudget> budget);
  ~SpanBatcher() override;
  SpanBatcher(const SpanBatcher&) = delete;
  SpanBatcher& operator=(const SpanBatcher&) = delete;

  std::unique_ptr<opentelemetry::sdk::trace::Recordable> MakeRecordable() noexcept override;
  void OnStart(opentelemetry::sdk::trace::Recordable& span,
               const opentelemetry::trace::SpanContext& parent) noexcept override;
  void OnEnd(std::unique_ptr<opentelemetry::sdk::trace::Recordable>&& span) noexcept override;
  // Sends every span waiting now; false when `timeout` passed first.
  bool ForceFlush(std::chrono::microseconds timeout) noexcept override;
  // Sends what waits (an exporter already shut fails them, counted), ends
  // the thread, then shuts the exporter. Once; later calls return true.
  bool Shutdown(std::chrono::microseconds timeout) noexcept override;

 private:
  struct Waiting {
    std::chrono::steady_clock::time_point since;
    std::unique_ptr<opentelemetry::sdk::trace::Recordable> span;
  };

  void run();
  // With the lock held: whether a batch should leave now, else until when
  // the thread may sleep.
  bool batch_due(std::chrono::steady_clock::time_point& wake_at) const;
  void send(std::deque<Waiting>& batch);

  std::unique_ptr<opentelemetry::sdk::trace::SpanExporter> exporter_;
  const Limits limits_;
  std::shared_ptr<SpanBudget> budget_;

  std::mutex mutex_;
  std::condition_variable wake_;     // the export thread: a full batch, a flush, the stop
  std::condition_variable flushed_;  // ForceFlush: what it asked for has left
  std::deque<Waiting> queue_;
  std::uint64_t flush_asked_ = 0;  // ForceFlush calls so far
  std::uint64_t flush_done_ = 0;   // those whose spans have all left
  bool stopping_ = false;
  bool shut_ = false;
  std::thread thread_;
};

}  // namespace echomq::daemon
