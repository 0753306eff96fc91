#include "record_settled.h"

#include <spdlog/spdlog.h>

#include "logging.h"

namespace echomq::daemon {

namespace {

void count(Settled how, const Settlement& s, RunningJobs& running, QueueMetrics& qm) {
  switch (how) {
    case Settled::Completed: qm.completed->Increment(); break;
    case Settled::Retried: qm.failed_retry->Increment(); break;
    case Settled::Dead: qm.failed_dead->Increment(); break;
    case Settled::Released: qm.released->Increment(); break;
    case Settled::LeaseLost:
      // The renewer may have found it lost first and counted it then.
      if (running.reason(s.lease) != StopReason::LeaseLost) qm.lease_lost->Increment();
      break;
  }
}

void log(const std::string& queue, Settled how, const Settlement& s) {
  if (how == Settled::LeaseLost) {
    spdlog::warn("queue={} job={} attempt={} lease lost before its outcome counted", queue, s.lease.id, s.attempt);
  } else if (how == Settled::Dead) {
    spdlog::warn("queue={} job={} attempt={} dead: {}", queue, s.lease.id, s.attempt, s.text);
  } else {
    spdlog::debug("queue={} job={} attempt={} {}", queue, s.lease.id, s.attempt, to_string(how));
  }
}

}  // namespace

std::optional<Error> record_settled(const std::string& queue, std::deque<Settlement>& batch,
                                    const std::vector<Reply>& replies, std::deque<Settlement>& keep,
                                    RunningJobs& running, QueueMetrics& qm) {
  std::optional<Error> refused;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Settlement& s = batch[i];
    const LogTraceScope log_trace(s.trace_id);
    Settled how;
    try {
      how = Settler::decode(s, replies[i]);
    } catch (const Error& e) {
      if (e.transient()) {
        if (!refused) refused = e;
        keep.push_back(std::move(s));
        continue;
      }
      spdlog::error("queue={} job={} could not be settled: {}", queue, s.lease.id, e.what());
      running.remove(s.lease);
      continue;
    }
    count(how, s, running, qm);
    log(queue, how, s);
    running.remove(s.lease);
  }
  return refused;
}

}  // namespace echomq::daemon
