// The `pool` kind: `concurrency` long-lived processes per queue, each
// running one job at a time over NDJSON (pool_protocol.h). A slot thread
// takes a free process, sends it the job's frame and waits for its reply.
//
// A process is replaced when it dies, breaks the protocol (a line that
// does not parse, a reply for another job, a closed stdout, a line past
// max_output_bytes), runs past timeout_s, or is stopped by the daemon;
// and recycled (stdin closed, then replaced) after max_jobs_per_process
// jobs. When replacements keep failing, each next start waits longer
// (restart_backoff). One watcher thread logs every process's stderr, with
// its pid, between jobs too, notices a process that dies while idle,
// starts the replacements and sees the ended ones out.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "config/config_types.h"
#include "echomq/backoff.h"
#include "handlers/handler.h"
#include "handlers/pool_process.h"
#include "process/fd.h"
#include "handlers/handler_env.h"

namespace echomq::daemon {

class PoolHandler : public Handler {
 public:
  using Clock = std::chrono::steady_clock;

  struct Params {
    std::string queue;
    HandlerConfig handler;
    int concurrency = 1;  // processes, and the most run() calls at once
    // Never passed on from the daemon's environment (password_env's name).
    std::vector<std::string> secret_env_names;
    // Called for each process started to replace another, whatever the
    // reason (emq_handler_restarts_total). Runs on the watcher thread with
    // the pool's lock held: it must be quick and must not call back into
    // this handler.
    std::function<void()> on_restart;
    // The wait before the Nth replacement in a row that follows a failure
    // (no job answered in between): none for the first, then
    // backoff_delay_ms(restart_backoff, N - 1).
    BackoffPolicy restart_backoff{100, 2.0, 10000, 0.2};
  };

  explicit PoolHandler(Params params);
  // Ends every process (as shutdown() does) if shutdown() was not called.
  ~PoolHandler() override;

  // Starts the processes. Throws std::runtime_error when the command cannot
  // run at all (missing, not executable, cwd missing).
  void start() override;
  Outcome run(const Job& job, const StopToken& stop) override;
  // Not ready while no process is up and the pool is in restart backoff
  // (two failures in a row or more): no job running, and no idle process a
  // job may go to (see usable()).
  std::string not_ready() const override;
  // After the last run(): closes each process's stdin and waits for it to
  // exit, killing it after kill_grace_s.
  void shutdown() override;

  // Processes started to replace another, since start().
  std::uint64_t restarts() const noexcept { return restarts_.load(); }
  // The pids of the processes running now (idle or busy), for operators
  // and tests.
  std::vector<pid_t> pids() const;

 private:
  struct Slot {
    enum class State { Idle, Busy, Waiting, Spawning, Closed };
    State state = State::Waiting;
    std::unique_ptr<PoolProcess> process;  // Idle; Busy: the running job's
    pid_t pid = 0;                         // Idle, Busy
    Clock::time_point start_at;            // Waiting: when to start the next process
    Clock::time_point up_since;            // Idle, Busy: when the process started
    int failures = 0;                      // replacements in a row after a failure
    std::string last_failure;
    bool started_before = false;
  };
  struct Ending {
    std::unique_ptr<PoolProcess> process;
    Clock::time_point kill_at;
  };
  enum class How { CloseStdin, Terminate };

  // The watcher thread's loop (pool_watcher.cpp).
  void watch();
  // Caller holds mu_.
  void read_idle_and_ending(const std::vector<PoolProcess*>& readable, bool tick);
  // Starts the processes of Waiting slots whose time has come; unlocks
  // while spawning.
  void start_due(std::unique_lock<std::mutex>& lock);
  // Hands the process to the watcher to end. Caller holds mu_.
  void end_process(std::unique_ptr<PoolProcess> process, How how);
  // Ends a process that must go (SIGTERM), plans its slot's next start and
  // logs why (nothing when why is ""). A failure counts towards the restart
  // backoff. Caller holds mu_.
  void replace_process(Slot& slot, std::unique_ptr<PoolProcess> process, const std::string& why, bool failed);
  // The slot's process is gone: plans the next start. Caller holds mu_.
  void replace_later(Slot& slot, bool failed, const std::string& why);
  // A free process for one job (the slot's index in `index`), or null with
  // why there is none in `failed`.
  std::unique_ptr<PoolProcess> take_process(std::size_t& index, const StopToken& stop,
                                            std::optional<Clock::time_point> timeout_at, Outcome& failed);
  void give_back(std::size_t index, std::unique_ptr<PoolProcess> process, const PoolProcess::Turn& turn);
  // Idle, and either no failure since the last answered job, or its
  // process has lived kProvenAfter: a job may go to it.
  static bool usable(const Slot& slot, Clock::time_point now);
  void wake_watcher() noexcept;
  // Whole milliseconds from now to t, 0 when past.
  static long long ms_until(Clock::time_point t);

  Params params_;
  ChildProcess::Params process_params_;  // the same for every process of the pool
  Fd wake_;                              // an eventfd: the watcher's poll() wakes on it

  mutable std::mutex mu_;
  std::condition_variable changed_;  // a slot became Idle, or the pool closed
  std::vector<Slot> slots_;
  std::vector<Ending> ending_;
  bool closing_ = false;  // shutdown(): nothing new starts
  std::mt19937_64 rng_;
  std::thread watcher_;
  std::atomic<std::uint64_t> restarts_{0};
};

// secret_env_names: the daemon's variables a handler must never see.
// on_restart: see PoolHandler::Params.
std::unique_ptr<Handler> make_pool_handler(const QueueConfig& queue, std::vector<std::string> secret_env_names,
                                           std::function<void()> on_restart);

}  // namespace echomq::daemon
