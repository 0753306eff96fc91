#include "job_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "clock.h"

namespace echomq::daemon {

JobRunner::JobRunner(const QueueConfig& queue, Handler& handler, RunningJobs& running, QueueMetrics& metrics,
                     Deliver deliver)
    : queue_(queue), handler_(handler), running_(running), metrics_(metrics), deliver_(std::move(deliver)) {}

JobRunner::~JobRunner() {
  request_stop();
  join();
}

void JobRunner::start() {
  for (int i = 0; i < queue_.concurrency; ++i) slots_.emplace_back([this] { slot_main(); });
}

void JobRunner::submit(ClaimedJob job, RunningJob* held) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++busy_;
    work_.push_back({std::move(job), held});
  }
  metrics_.in_flight->Increment();
  cv_.notify_one();
}

int JobRunner::free_slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.concurrency - busy_;
}

int JobRunner::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_;
}

void JobRunner::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
}

void JobRunner::join() {
  for (std::thread& t : slots_) {
    if (t.joinable()) t.join();
  }
  slots_.clear();
}

void JobRunner::slot_main() {
  while (true) {
    Work w;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Work already handed over still runs while stopping: its lease is held.
      cv_.wait(lock, [&] { return stopping_ || !work_.empty(); });
      if (work_.empty()) return;
      w = std::move(work_.front());
      work_.pop_front();
    }
    run_one(w);
  }
}

void JobRunner::run_one(Work& w) {
  Job job;
  job.queue = queue_.name;
  job.id = w.job.id;
  job.payload = std::move(w.job.payload);
  job.attempt = w.job.attempt;
  job.deadline_ms =
      queue_.handler.timeout_s > 0 ? epoch_ms() + static_cast<std::int64_t>(queue_.handler.timeout_s * 1000) : 0;

  spdlog::debug("queue={} job={} attempt={} started", queue_.name, job.id, job.attempt);
  const auto began = std::chrono::steady_clock::now();
  Outcome outcome = handler_.run(job, w.held->stop);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  metrics_.handler_duration->Observe(seconds);
  metrics_.in_flight->Decrement();

  std::optional<Settlement> settlement;
  const Lease lease = w.held->lease;  // w.held ends with remove()
  switch (running_.reason(lease)) {
    case StopReason::LeaseLost:
      spdlog::warn("queue={} job={} attempt={} lease lost: outcome discarded", queue_.name, job.id, job.attempt);
      running_.remove(lease);
      break;
    case StopReason::Shutdown:
      settlement = Settlement::release(lease, job.attempt);
      break;
    case StopReason::None:
      if (outcome.verdict != Outcome::Verdict::Complete) {
        spdlog::warn("queue={} job={} attempt={} failed after {:.3f}s: {}", queue_.name, job.id, job.attempt, seconds,
                     outcome.error);
      }
      settlement = Settlement::from_outcome(lease, job.attempt, std::move(outcome));
      break;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --busy_;
  }
  deliver_(std::move(settlement));
}

}  // namespace echomq::daemon
