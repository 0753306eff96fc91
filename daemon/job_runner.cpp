#include "job_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "clock.h"
#include "logging.h"

namespace echomq::daemon {

JobRunner::JobRunner(const QueueConfig& queue, Handler& handler, RunningJobs& running, QueueMetrics& metrics,
                     Deliver deliver, Tracing* tracing)
    : queue_(queue),
      handler_(handler),
      running_(running),
      metrics_(metrics),
      deliver_(std::move(deliver)),
      tracing_(tracing) {}

JobRunner::~JobRunner() {
  request_stop();
  join();
}

void JobRunner::start() {
  for (int i = 0; i < queue_.concurrency; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    Slot& slot = *slots_.back();
    slot.thread = std::thread([this, &slot] { run_slot(slot); });
  }
}

void JobRunner::submit(std::vector<Assignment> jobs) {
  Slot* wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Assignment& a : jobs) waiting_.push_back(std::move(a));
    wake = wake_target_locked();
  }
  if (wake != nullptr) wake->cv.notify_one();
}

JobRunner::Capacity JobRunner::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int waiting = static_cast<int>(waiting_.size());
  return {queue_.concurrency + queue_.prefetch - running_count_ - waiting,
          queue_.concurrency - running_count_ > waiting};
}

int JobRunner::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_count_ + static_cast<int>(waiting_.size());
}

JobRunner::Load JobRunner::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {running_count_, static_cast<int>(waiting_.size())};
}

std::vector<JobRunner::Assignment> JobRunner::take_waiting() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Assignment> taken(std::make_move_iterator(waiting_.begin()), std::make_move_iterator(waiting_.end()));
  waiting_.clear();
  return taken;
}

void JobRunner::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  for (auto& slot : slots_) slot->cv.notify_one();
}

void JobRunner::join() {
  for (auto& slot : slots_) {
    if (slot->thread.joinable()) slot->thread.join();
  }
  slots_.clear();
}

// Chained wake-ups: a batch wakes one sleeping slot, and a slot that takes a
// job while more wait wakes the next. Jobs that end in microseconds are then
// run by the slots already awake, instead of costing a thread wake-up each
// (the largest cost of a no-op job); jobs that block still get a slot each,
// one wake-up apart. The most recently idle slot is woken first: its stack
// and caches are warm, and at light load the other threads stay asleep with
// their memory untouched.
JobRunner::Slot* JobRunner::wake_target_locked() {
  if (waiting_.empty() || idle_.empty() || wake_pending_) return nullptr;
  Slot* slot = idle_.back();
  idle_.pop_back();
  slot->woken = true;
  wake_pending_ = true;
  return slot;
}

void JobRunner::run_slot(Slot& me) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (waiting_.empty()) {
      if (stopping_) break;  // work already handed over still runs: its lease is held
      me.woken = false;
      idle_.push_back(&me);
      me.cv.wait(lock, [&] { return me.woken || stopping_; });
      if (me.woken) {
        wake_pending_ = false;
      } else {
        idle_.erase(std::find(idle_.begin(), idle_.end(), &me));
      }
      continue;
    }
    Assignment a = std::move(waiting_.front());
    waiting_.pop_front();
    ++running_count_;
    Slot* next = wake_target_locked();
    lock.unlock();
    if (next != nullptr) next->cv.notify_one();

    std::optional<Settlement> settlement = run_one(a);
    lock.lock();
    --running_count_;  // before the delivery, so the claim loop it wakes sees the free slot
    lock.unlock();
    deliver_(std::move(settlement));
    lock.lock();
  }
}

std::optional<Settlement> JobRunner::run_one(Assignment& a) {
  Job job;
  job.queue = queue_.name;
  job.id = a.job.id;
  job.payload = std::move(a.job.payload);
  job.attempt = a.job.attempt;
  job.children = std::move(a.children);
  job.progress = [this, lease = a.held->lease](std::string_view v) { running_.report_progress(lease, v); };
  running_.started(a.held->lease);
  metrics_.in_flight->Increment();
  job.deadline_ms =
      queue_.handler.timeout_s > 0 ? epoch_ms() + static_cast<std::int64_t>(queue_.handler.timeout_s * 1000) : 0;
  JobSpan span = tracing_ != nullptr ? tracing_->begin(queue_.name, job.id, job.attempt, job.payload.size(), a.context)
                                     : JobSpan();
  job.traceparent = span.traceparent();
  job.tracestate = span.tracestate();
  const LogTraceScope log_trace(span.trace_id());

  spdlog::debug("queue={} job={} attempt={} started", queue_.name, job.id, job.attempt);
  const auto began = std::chrono::steady_clock::now();
  Outcome outcome;
  try {
    outcome = handler_.run(job, a.held->stop);
  } catch (const std::exception& e) {
    // Handlers promise not to throw; should one break it on a job a peer
    // shaped, the job fails and the slot lives (an escape is std::terminate).
    outcome = {Outcome::Verdict::Retry, {}, std::string("the handler threw: ") + e.what()};
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  metrics_.handler_duration->Observe(seconds);
  metrics_.in_flight->Decrement();

  std::optional<Settlement> settlement;
  const Lease lease = a.held->lease;  // a.held ends with remove()
  const StopReason stopped = running_.finish(lease);
  span.end(span_outcome(stopped, outcome, job.attempt), outcome.error);
  switch (stopped) {
    case StopReason::LeaseLost:
      spdlog::warn("queue={} job={} attempt={} lease lost: outcome discarded", queue_.name, job.id, job.attempt);
      running_.remove(lease);
      break;
    case StopReason::Shutdown: settlement = Settlement::release(lease, job.attempt); break;
    case StopReason::None:
      if (outcome.verdict == Outcome::Verdict::Release) {
        spdlog::warn("queue={} job={} attempt={} not run, given back uncounted: {}", queue_.name, job.id, job.attempt,
                     outcome.error);
      } else if (outcome.verdict != Outcome::Verdict::Complete) {
        spdlog::warn("queue={} job={} attempt={} failed after {:.3f}s: {}", queue_.name, job.id, job.attempt, seconds,
                     outcome.error);
      }
      settlement = Settlement::from_outcome(lease, job.attempt, std::move(outcome));
      break;
  }
  if (settlement && tracing_ != nullptr) settlement->trace_id = span.trace_id();
  return settlement;
}

SpanOutcome JobRunner::span_outcome(StopReason reason, const Outcome& outcome, std::int64_t attempt) const {
  if (reason == StopReason::LeaseLost) return SpanOutcome::LeaseLost;
  if (reason == StopReason::Shutdown) return SpanOutcome::Released;
  switch (outcome.verdict) {
    case Outcome::Verdict::Complete: return SpanOutcome::Completed;
    case Outcome::Verdict::Release: return SpanOutcome::Released;
    case Outcome::Verdict::Dead: return SpanOutcome::Dead;
    case Outcome::Verdict::Retry: break;
  }
  return attempt >= queue_.max_attempts ? SpanOutcome::Dead : SpanOutcome::Retry;
}

}  // namespace echomq::daemon
