// The leases this daemon holds for one queue: every job from the claim that
// leased it until its outcome has been settled on the server. The lease
// renewer extends exactly these; a lease it finds lost is marked here, and
// the job's handler is told to stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "echomq/transitions.h"
#include "handlers/stop_token.h"

namespace echomq::daemon {

// Why a job was told to stop: decides what becomes of its outcome.
enum class StopReason {
  None,
  LeaseLost,  // another worker may hold it now: the outcome must not count
  Shutdown,   // the drain timed out: give the job back with release
};

struct RunningJob {
  Lease lease;
  std::chrono::steady_clock::time_point claimed_at;
  StopToken stop;
  StopReason reason = StopReason::None;  // guarded by RunningJobs' mutex
};

class RunningJobs {
 public:
  // Registers a freshly claimed job; the returned pointer stays valid until
  // remove(id).
  RunningJob* add(const Lease& lease);
  void remove(const std::string& id);

  std::vector<Lease> leases() const;
  std::size_t size() const;

  // Marks the job and requests its stop; false when it is not held (any more).
  bool stop(const std::string& id, StopReason reason);
  // Requests a stop of every held job that was not stopped already.
  void stop_all(StopReason reason);
  StopReason reason(const std::string& id) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<RunningJob>> jobs_;
};

}  // namespace echomq::daemon
