#include "running_jobs.h"

namespace echomq::daemon {

RunningJob* RunningJobs::add(const Lease& lease, std::int64_t attempt) {
  auto job = std::make_unique<RunningJob>();
  job->lease = lease;
  job->attempt = attempt;
  job->claimed_at = std::chrono::steady_clock::now();
  RunningJob* raw = job.get();
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_[lease] = std::move(job);
  return raw;
}

void RunningJobs::remove(const Lease& lease) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.erase(lease);
}

void RunningJobs::started(const Lease& lease) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(lease);
  if (it != jobs_.end()) it->second->started_at = std::chrono::steady_clock::now();
}

std::vector<Lease> RunningJobs::leases() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Lease> out;
  out.reserve(jobs_.size());
  for (const auto& [lease, job] : jobs_) {
    if (job->reason != StopReason::LeaseLost) out.push_back(job->lease);
  }
  return out;
}

std::vector<RunningJobs::Held> RunningJobs::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Held> out;
  out.reserve(jobs_.size());
  for (const auto& [lease, job] : jobs_) {
    const bool reported = job->progress_unsent || job->progress_sent_at != std::chrono::steady_clock::time_point{};
    out.push_back({job->lease, job->attempt, job->claimed_at, job->started_at,
                   reported ? std::optional<std::string>(job->progress) : std::nullopt});
  }
  return out;
}

std::size_t RunningJobs::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

StopReason RunningJobs::finish(const Lease& lease) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(lease);
  if (it == jobs_.end()) return StopReason::None;
  if (it->second->reason != StopReason::LeaseLost) it->second->settling = true;
  return it->second->reason;
}

bool RunningJobs::stop(const Lease& lease, StopReason reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(lease);
  if (it == jobs_.end()) return false;
  if (reason == StopReason::LeaseLost && it->second->settling) return false;
  // A lost lease outranks a shutdown: a job another worker may hold must
  // not be released in its name.
  if (it->second->reason == StopReason::None || reason == StopReason::LeaseLost) it->second->reason = reason;
  it->second->stop.request();
  return true;
}

void RunningJobs::stop_all(StopReason reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [lease, job] : jobs_) {
    if (job->reason == StopReason::None) job->reason = reason;
    job->stop.request();
  }
}

StopReason RunningJobs::reason(const Lease& lease) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(lease);
  return it == jobs_.end() ? StopReason::None : it->second->reason;
}

void RunningJobs::report_progress(const Lease& lease, std::string_view value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = jobs_.find(lease);
    if (it == jobs_.end()) return;
    it->second->progress.assign(value.substr(0, kMaxProgressBytes));
    it->second->progress_unsent = true;
  }
  if (listener_) listener_();
}

std::vector<ProgressReport> RunningJobs::take_progress(std::chrono::steady_clock::time_point now,
                                                       std::chrono::milliseconds every,
                                                       std::optional<std::chrono::steady_clock::time_point>* next) {
  std::vector<ProgressReport> due;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [lease, job] : jobs_) {
    if (!job->progress_unsent || job->reason == StopReason::LeaseLost) continue;
    const auto at = job->progress_sent_at + every;
    if (at > now) {
      if (!*next || at < **next) *next = at;
      continue;
    }
    due.push_back({job->lease, job->progress});
    job->progress_unsent = false;
    job->progress_sent_at = now;
  }
  return due;
}

void RunningJobs::unsent_progress(const ProgressReport& report) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(report.lease);
  if (it != jobs_.end() && !it->second->progress_unsent && it->second->progress == report.value) {
    it->second->progress_unsent = true;
  }
}

}  // namespace echomq::daemon
