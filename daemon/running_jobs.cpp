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
  for (const auto& [lease, job] : jobs_) out.push_back({job->lease, job->attempt, job->claimed_at});
  return out;
}

std::size_t RunningJobs::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

bool RunningJobs::stop(const Lease& lease, StopReason reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(lease);
  if (it == jobs_.end()) return false;
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

}  // namespace echomq::daemon
