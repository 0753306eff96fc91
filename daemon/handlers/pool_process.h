// One long-lived process of a pool: a ChildProcess that takes one job
// frame at a time on its stdin and answers with one line on its stdout.
// Its stderr is logged line by line with the queue and its pid, across
// jobs. The pool (pool_handler.cpp) decides when it is replaced; this file
// only runs one job through it, watches it while idle, and ends it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config/config_types.h"
#include "handlers/handler.h"
#include "process/child_io_pump.h"
#include "process/child_process.h"
#include "process/stderr_lines.h"

namespace echomq::daemon {

class PoolProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // How one job went, and what it says about the process.
  struct Turn {
    enum class Then {
      Keep,     // healthy: ready for the next job
      Replace,  // stopped by the daemon, or past timeout_s: replace it at once
      Broken,   // died, broke the protocol, flooded: replace it, with backoff if it keeps happening
    };
    Outcome outcome;
    Then then = Then::Keep;
    bool answered = false;  // a well-formed reply for this job came back
    std::string why;        // Broken, and Replace past timeout_s: what the process did
  };

  // What the process did while it had no job.
  struct Idle {
    bool broken = false;
    std::string why;
  };

  // Throws SpawnError or std::system_error.
  PoolProcess(const ChildProcess::Params& params, const std::string& queue);

  pid_t pid() const noexcept { return child_.pid(); }
  std::int64_t jobs() const noexcept { return jobs_; }

  // Sends the job's frame and waits for its reply, the stop token, the
  // deadline or the process's end, whichever comes first. Never throws
  // for anything the process does.
  Turn run_job(const Job& job, const HandlerConfig& config, const StopToken& stop,
               std::optional<Clock::time_point> timeout_at);

  // For the pool's watcher, while no job runs: the descriptors to poll
  // (any may be -1), and what to do when one is ready.
  int stdout_fd() noexcept { return child_.stdout_pipe().get(); }
  int stderr_fd() noexcept { return child_.stderr_pipe().get(); }
  int exit_fd() const noexcept { return child_.exit_fd(); }
  Idle pump_idle();
  // Its stdout hit EOF while idle: it is most likely dying, and takes no
  // job. pump_idle() says it is broken once its exit shows, or at
  // idle_deadline() if it lives on.
  bool stdout_closed() const noexcept { return stdout_closed_at_.has_value(); }
  std::optional<Clock::time_point> idle_deadline() const;

  // Ending it. close_stdin(): the handler's cue to exit (drain, recycling).
  // terminate(): SIGTERM (and SIGCONT) to its group now. kill(): SIGKILL
  // to its group.
  void close_stdin() noexcept;
  void terminate() noexcept;
  void kill() noexcept;
  // While it is being ended: logs its stderr, discards its stdout. Returns
  // true once it has exited and been reaped.
  bool pump_ending();

 private:
  // The job's events, from the pump, to its turn.
  Turn job_turn(ChildIoPump& pump, const Job& job, const HandlerConfig& config);
  // Its reply line is in the pump's output.
  // nullopt: only progress lines so far; the pump goes on for the answer.
  std::optional<Turn> answer_turn(ChildIoPump& pump, const Job& job);
  // Everything stderr holds now, logged line by line.
  void drain_stderr();
  // The first line of buffer_, without its '\n', and the bytes after it.
  bool take_line(std::string& line, std::string& rest);
  Turn reply_turn(const std::string& line, const Job& job, bool leftover);
  Turn broken(Outcome::Verdict verdict, std::string error, std::string why);
  // Kills what is left of its group, drains the pipes and reaps it.
  ExitStatus reap();
  std::string describe_exit(const ExitStatus& status) const;
  std::string name() const;

  std::string queue_;
  ChildProcess child_;
  StderrLines stderr_;
  std::string buffer_;  // stdout bytes not yet taken as a line
  std::optional<Clock::time_point> stdout_closed_at_;
  std::int64_t jobs_ = 0;
};

}  // namespace echomq::daemon
