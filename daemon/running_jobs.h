// The leases this daemon holds for one queue: every job from the claim that
// leased it until its outcome has been settled on the server. The lease
// renewer extends exactly these; a lease it finds lost is marked here, and
// the job's handler is told to stop.
//
// Held by lease (id and epoch), not by id alone: a job whose lease was lost
// may be claimed again by this same daemon while its old run is still
// ending, and each run must keep its own stop token and books.
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
  std::int64_t attempt = 0;
  std::chrono::steady_clock::time_point claimed_at;
  StopToken stop;
  StopReason reason = StopReason::None;  // guarded by RunningJobs' mutex
};

class RunningJobs {
 public:
  // Registers a freshly claimed job; the returned pointer stays valid until
  // remove(lease).
  RunningJob* add(const Lease& lease, std::int64_t attempt = 0);
  void remove(const Lease& lease);

  std::vector<Lease> leases() const;
  // What the fleet registry shows of each held job (the heartbeat).
  struct Held {
    Lease lease;
    std::int64_t attempt;
    std::chrono::steady_clock::time_point claimed_at;
  };
  std::vector<Held> held() const;
  std::size_t size() const;

  // Marks the job and requests its stop; false when it is not held (any more).
  bool stop(const Lease& lease, StopReason reason);
  // Requests a stop of every held job that was not stopped already.
  void stop_all(StopReason reason);
  StopReason reason(const Lease& lease) const;

 private:
  // By id, then epoch; a lookup compares the caller's lease in place
  // rather than copying its id into a key (several lookups a job).
  struct LeaseOrder {
    bool operator()(const Lease& a, const Lease& b) const {
      const int c = a.id.compare(b.id);
      return c != 0 ? c < 0 : a.epoch < b.epoch;
    }
  };

  mutable std::mutex mutex_;
  std::map<Lease, std::unique_ptr<RunningJob>, LeaseOrder> jobs_;
};

}  // namespace echomq::daemon
