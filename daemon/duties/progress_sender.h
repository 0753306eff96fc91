// Progress reports of running jobs on their way to the server: each job's
// latest report, at most one stored per job every 250 ms (4 a second),
// through the fenced `progress` transition (PROTOCOL.md, "Events"), all
// queues' due reports in one round trip. A report the job's end overtakes
// is dropped with the job (RunningJobs); a lost lease's is refused by the
// server and changes nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "claim_loop.h"
#include "echomq/executor.h"
#include "metrics.h"

namespace echomq::daemon {

class ProgressSender {
 public:
  static constexpr std::chrono::milliseconds kEvery{250};

  // Listens to each loop's running jobs from now on.
  ProgressSender(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
                 ReconnectPolicy reconnect = {});
  ~ProgressSender();
  ProgressSender(const ProgressSender&) = delete;
  ProgressSender& operator=(const ProgressSender&) = delete;

  void start();
  void request_stop();
  void join();

 private:
  void main();
  // Sends what is due; returns when the next report falls due, if any.
  std::optional<std::chrono::steady_clock::time_point> send_due();
  void wake();

  std::vector<ClaimLoop*> loops_;
  Executor executor_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace echomq::daemon
