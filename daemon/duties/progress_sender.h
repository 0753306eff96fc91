// Progress reports of running jobs on their way to the server: each job's
// latest report, at most one stored per job every 250 ms (4 a second),
// through the fenced `progress` transition (PROTOCOL.md, "Events"), all
// queues' due reports in one round trip. A report the job's end overtakes
// is dropped with the job (RunningJobs); a lost lease's is refused by the
// server and changes nothing. A new report wakes it; nothing due, it sleeps.
#pragma once

#include <chrono>
#include <vector>

#include "claim_loop.h"
#include "duties/periodic.h"
#include "echomq/executor.h"
#include "metrics.h"

namespace echomq::daemon {

class ProgressSender : public Periodic {
 public:
  static constexpr std::chrono::milliseconds kEvery{250};

  // Listens to each loop's running jobs from now on.
  ProgressSender(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
                 ReconnectPolicy reconnect = {});
  ~ProgressSender() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  std::vector<ClaimLoop*> loops_;
  Executor executor_;
};

}  // namespace echomq::daemon
