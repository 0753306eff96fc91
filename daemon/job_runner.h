// The handler slots of one queue: `concurrency` threads, each running one
// claimed job at a time through the queue's handler, then handing the
// outcome on to be settled. A job whose lease was lost meanwhile is
// discarded here: its answer could no longer count.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "config_types.h"
#include "handlers/handler.h"
#include "metrics.h"
#include "running_jobs.h"
#include "settle.h"

namespace echomq::daemon {

class JobRunner {
 public:
  // Called from a slot thread when a job ends: a settlement to send, or
  // nullopt when there is nothing to send (the slot is free all the same).
  using Deliver = std::function<void(std::optional<Settlement>)>;

  JobRunner(const QueueConfig& queue, Handler& handler, RunningJobs& running, QueueMetrics& metrics,
            Deliver deliver);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  void start();
  // Hands a claimed job to a free slot; the caller sized its claim to
  // free_slots(), so there always is one.
  void submit(ClaimedJob job, RunningJob* held);
  int free_slots() const;
  int busy() const;
  // No new jobs; each slot ends after its current one.
  void request_stop();
  void join();

 private:
  struct Work {
    ClaimedJob job;
    RunningJob* held;
  };
  void slot_main();
  void run_one(Work& w);

  const QueueConfig& queue_;
  Handler& handler_;
  RunningJobs& running_;
  QueueMetrics& metrics_;
  Deliver deliver_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Work> work_;
  int busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> slots_;
};

}  // namespace echomq::daemon
