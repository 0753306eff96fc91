#include "tracing/span_batcher.h"

#include <algorithm>
#include <vector>

#include "tracing/span_record.h"

namespace echomq::daemon {

namespace sdktrace = opentelemetry::sdk::trace;
using Clock = std::chrono::steady_clock;

SpanBatcher::SpanBatcher(std::unique_ptr<sdktrace::SpanExporter> exporter, Limits limits,
                         std::shared_ptr<SpanBudget> budget)
    : exporter_(std::move(exporter)), limits_(limits), budget_(std::move(budget)) {
  thread_ = std::thread([this] { run(); });
}

SpanBatcher::~SpanBatcher() { Shutdown(std::chrono::microseconds(0)); }

// The exporter's own recordable is made in the export thread (send).
std::unique_ptr<sdktrace::Recordable> SpanBatcher::MakeRecordable() noexcept { return std::make_unique<SpanRecord>(); }

void SpanBatcher::OnStart(sdktrace::Recordable&, const opentelemetry::trace::SpanContext&) noexcept {}

void SpanBatcher::OnEnd(std::unique_ptr<sdktrace::Recordable>&& span) noexcept {
  bool wake = false;  // the thread sleeps without a timer while none waits
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;  // every job has ended before the stop
    if (queue_.size() >= limits_.max_queue) {
      budget_->queue_full();
      return;
    }
    queue_.push_back({Clock::now(), std::move(span)});
    wake = queue_.size() == 1 || queue_.size() == limits_.max_batch;
  }
  budget_->queue_has_room();
  if (wake) wake_.notify_one();
}

bool SpanBatcher::batch_due(Clock::time_point& wake_at) const {
  if (stopping_ || flush_asked_ > flush_done_ || queue_.size() >= limits_.max_batch) return true;
  if (queue_.empty()) {
    wake_at = Clock::time_point::max();
    return false;
  }
  wake_at = queue_.front().since + limits_.delay;
  return Clock::now() >= wake_at;
}

void SpanBatcher::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    Clock::time_point wake_at;
    if (!batch_due(wake_at)) {
      if (wake_at == Clock::time_point::max()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, wake_at);
      }
      continue;
    }
    if (queue_.empty()) {
      // A flush finds nothing more to send; a stop, nothing left.
      flush_done_ = flush_asked_;
      flushed_.notify_all();
      if (stopping_) return;
      continue;
    }
    const std::uint64_t asked = flush_asked_;
    const std::size_t n = std::min(queue_.size(), limits_.max_batch);
    std::deque<Waiting> batch;
    batch.insert(batch.end(), std::make_move_iterator(queue_.begin()),
                 std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(n)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    send(batch);
    lock.lock();
    if (queue_.empty() && asked > flush_done_) {
      flush_done_ = asked;
      flushed_.notify_all();
    }
  }
}

// Each record becomes the exporter's recordable here, off the slots'
// threads; the exporter (counted_exporter) reports its answer to the budget.
void SpanBatcher::send(std::deque<Waiting>& batch) {
  std::vector<std::unique_ptr<sdktrace::Recordable>> spans;
  spans.reserve(batch.size());
  for (Waiting& w : batch) {
    std::unique_ptr<sdktrace::Recordable> span = exporter_->MakeRecordable();
    static_cast<const SpanRecord&>(*w.span).replay(*span);
    w.span.reset();
    spans.push_back(std::move(span));
  }
  exporter_->Export(opentelemetry::nostd::span<std::unique_ptr<sdktrace::Recordable>>(spans.data(), spans.size()));
}

bool SpanBatcher::ForceFlush(std::chrono::microseconds timeout) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return false;
  const std::uint64_t mine = ++flush_asked_;
  wake_.notify_one();
  const auto done = [&] { return flush_done_ >= mine; };
  // The SDK's convention: 0 (or less) is no limit, as is the maximum.
  if (timeout <= std::chrono::microseconds::zero() || timeout >= std::chrono::hours(24)) {
    flushed_.wait(lock, done);
    return true;
  }
  return flushed_.wait_for(lock, timeout, done);
}

bool SpanBatcher::Shutdown(std::chrono::microseconds timeout) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_) return true;
    shut_ = true;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  return exporter_->Shutdown(timeout);
}

}  // namespace echomq::daemon
