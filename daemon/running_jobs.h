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
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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
  // When a slot started it (guarded by RunningJobs' mutex); unset while it
  // waits for a slot, claimed ahead (prefetch).
  std::optional<std::chrono::steady_clock::time_point> started_at;
  StopToken stop;
  StopReason reason = StopReason::None;  // guarded by RunningJobs' mutex
  // Its outcome is on its way to the server (guarded by RunningJobs'
  // mutex): the settle's reply, not a renewal, says whether it held.
  bool settling = false;
  // The latest progress its handler reported, and whether the server has
  // it yet (guarded by RunningJobs' mutex): the job's end drops it unsent.
  std::string progress;
  bool progress_unsent = false;
  std::chrono::steady_clock::time_point progress_sent_at{};
};

// A progress report due to be sent (RunningJobs::take_progress).
struct ProgressReport {
  Lease lease;
  std::string value;
};

class RunningJobs {
 public:
  // Registers a freshly claimed job; the returned pointer stays valid until
  // remove(lease).
  RunningJob* add(const Lease& lease, std::int64_t attempt = 0);
  void remove(const Lease& lease);
  // A slot starts the job now: it no longer waits, claimed ahead.
  void started(const Lease& lease);

  std::vector<Lease> leases() const;
  // What the fleet registry shows of each held job (the heartbeat).
  struct Held {
    Lease lease;
    std::int64_t attempt;
    std::chrono::steady_clock::time_point claimed_at;
    std::optional<std::chrono::steady_clock::time_point> started_at;  // unset: waits for a slot
    std::optional<std::string> progress;                              // the latest its handler reported
  };
  std::vector<Held> held() const;
  std::size_t size() const;

  // Its handler has returned: why it was told to stop, in one reading
  // with the mark that its outcome (unless its lease was lost) now waits
  // to be settled, so that no renewal in between counts the lease lost.
  StopReason finish(const Lease& lease);
  // Marks the job and requests its stop; false when it is not held (any
  // more). A lost lease is not marked on a job already settling: its
  // outcome may have reached the server before the renewal that found
  // the lease gone, and the settle's reply tells which.
  bool stop(const Lease& lease, StopReason reason);
  // Requests a stop of every held job that was not stopped already.
  void stop_all(StopReason reason);
  StopReason reason(const Lease& lease) const;

  // A handler's report for a held job: its latest, replacing one unsent.
  void report_progress(const Lease& lease, std::string_view value);
  // The reports due at `now` (unsent, and none of the job's sent in the
  // last `every`), marked sent; *next is when the next unsent one is due.
  std::vector<ProgressReport> take_progress(std::chrono::steady_clock::time_point now, std::chrono::milliseconds every,
                                            std::optional<std::chrono::steady_clock::time_point>* next);
  // A report the server could not take: unsent again, unless a newer one came.
  void unsent_progress(const ProgressReport& report);
  // Called after each report, outside the lock: the sender's wake-up. Set
  // before the first job runs.
  void on_progress(std::function<void()> listener) { listener_ = std::move(listener); }

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
  std::function<void()> listener_;
};

}  // namespace echomq::daemon
