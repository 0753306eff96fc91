// The handler slots of one queue: `concurrency` threads, each running one
// claimed job at a time through the queue's handler, then handing the
// outcome on to be settled. A job whose lease was lost meanwhile is
// discarded here: its answer could no longer count.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "config/config_types.h"
#include "handlers/handler.h"
#include "metrics.h"
#include "running_jobs.h"
#include "echomq/trace_context.h"
#include "settle.h"
#include "tracing/tracing.h"

namespace echomq::daemon {

class JobRunner {
 public:
  // Called from a slot thread when a job ends: a settlement to send, or
  // nullopt when there is nothing to send (the slot is free all the same).
  using Deliver = std::function<void(std::optional<Settlement>)>;

  // A claimed job and its entry in RunningJobs.
  struct Assignment {
    ClaimedJob job;
    RunningJob* held;
    std::vector<ChildResult> children;  // a parent's children's results
    TraceContext context;               // the row's, when the daemon traces
  };

  // `tracing`: null while tracing is off, else each job runs in a span.
  JobRunner(const QueueConfig& queue, Handler& handler, RunningJobs& running, QueueMetrics& metrics, Deliver deliver,
            Tracing* tracing = nullptr);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  void start();
  // Queues claimed jobs for the slots; the caller sized its claim to
  // capacity().room.
  void submit(std::vector<Assignment> jobs);
  // How many more jobs may be claimed (room: the free slots plus the
  // queue's prefetch, less the jobs already waiting for a slot), and
  // whether a slot has, or is about to have, nothing to take; read
  // together, as the claim loop asks both after every job.
  struct Capacity {
    int room;
    bool starving;
  };
  Capacity capacity() const;
  // Jobs handed over and not ended yet: running, or waiting for a slot.
  int busy() const;
  // The same two apart, read together: running (at most concurrency) and
  // waiting for a slot (claimed ahead, prefetch).
  struct Load {
    int running;
    int waiting;
  };
  Load load() const;
  // Takes back the jobs no slot has started, for release at the drain.
  std::vector<Assignment> take_waiting();
  // No new jobs; each slot ends once nothing waits.
  void request_stop();
  void join();

 private:
  // A slot thread and its own wake-up, so the runner chooses which one wakes.
  struct Slot {
    std::condition_variable cv;
    bool woken = false;
    std::thread thread;
  };
  void run_slot(Slot& me);
  std::optional<Settlement> run_one(Assignment& a);
  // The outcome as the span says it, before the server has taken it.
  SpanOutcome span_outcome(StopReason reason, const Outcome& outcome, std::int64_t attempt) const;
  Slot* wake_target_locked();

  const QueueConfig& queue_;
  Handler& handler_;
  RunningJobs& running_;
  QueueMetrics& metrics_;
  Deliver deliver_;
  Tracing* tracing_;

  mutable std::mutex mutex_;
  std::deque<Assignment> waiting_;
  int running_count_ = 0;
  std::vector<Slot*> idle_;    // sleeping slots, the most recently idle last
  bool wake_pending_ = false;  // a slot has been woken and has not taken work yet
  bool stopping_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;  // stable addresses: idle_ points into them
};

}  // namespace echomq::daemon
