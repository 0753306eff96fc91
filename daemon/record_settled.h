// What the claim loop does with the server's answers to a batch of
// settlements: counts and logs each outcome, and lets go of its lease.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "metrics.h"
#include "running_jobs.h"
#include "settle.h"

namespace echomq::daemon {

// replies[i] answers batch[i]. What the server refused for now (a transient
// error) moves to `keep`, to be sent again; the first such refusal is
// returned. A refusal that retrying cannot mend is logged and let go: the
// lease will expire and the reaper will hand the job out again.
std::optional<Error> record_settled(const std::string& queue, std::deque<Settlement>& batch,
                                    const std::vector<Reply>& replies, std::deque<Settlement>& keep,
                                    RunningJobs& running, QueueMetrics& qm);

}  // namespace echomq::daemon
