// A child's I/O while it runs a job, from one poll() loop so no pipe can
// block the daemon: input written to its stdin as it makes room, stdout
// gathered up to a cap, stderr logged line by line, and the stop token, the
// child's exit and the deadlines watched beside them. run() returns at each
// event a handler's policy must judge; what follows is the policy's: exec
// maps the exit status, a pool reads its one NDJSON line and decides the
// process's turn.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "process/child_process.h"
#include "process/progress_lines.h"
#include "process/stderr_lines.h"

namespace echomq::daemon {

// One read of a non-blocking pipe into `into`: Data, Again (nothing now),
// or Eof, after which the pipe is closed. One read per readiness, so a
// flood on one pipe cannot starve the rest of a loop.
enum class PipeRead { Data, Again, Eof };
PipeRead read_pipe(Fd& fd, std::string& into);

class ChildIoPump {
 public:
  using Clock = std::chrono::steady_clock;

  // Once the child has exited, how long the pump waits for EOF on its
  // stdout and stderr. Everything the child itself wrote is in the pipes
  // when it exits, so the wait only serves processes it left behind, which
  // the contract does not cover; a short fixed grace (rather than
  // kill_grace_s) keeps a handler that backgrounds a daemon from costing
  // seconds on every job.
  static constexpr std::chrono::milliseconds kPipeGrace{100};

  struct Rules {
    std::string_view input;      // written to stdin; must outlive the pump
    bool close_stdin = true;     // EOF after the input (exec); a pool's stdin stays open
    std::size_t max_output = 0;  // stdout bytes beyond this: OutputExceeded
    bool until_newline = false;  // Answered once stdout holds a '\n' (a pool's reply line)
    std::optional<Clock::time_point> timeout_at;
    ProgressLines* progress = nullptr;  // fed from the child's progress pipe, when it has one
  };

  // Why run() returned.
  enum class Event {
    Exited,          // the child exited and its stdout and stderr closed (or kPipeGrace passed)
    Answered,        // stdout holds a '\n' (Rules::until_newline)
    Stopped,         // the stop token fired (reported once)
    TimedOut,        // Rules::timeout_at passed while the child lived (reported once)
    OutputExceeded,  // stdout passed max_output; stdout is closed, the rest unread
    StdinRefused,    // the child closed its stdin before all input was in (reported once)
    StdoutClosed,    // EOF on stdout while the child lives (reported once)
    WokeUp,          // the caller's wake_at passed
  };

  // stop_fd: the job's stop token's descriptor, or -1.
  ChildIoPump(ChildProcess& child, StderrLines& stderr_lines, int stop_fd, Rules rules);

  // Pumps until the next event, or until wake_at. Throws std::system_error
  // when poll() fails.
  Event run(std::optional<Clock::time_point> wake_at = std::nullopt);

  // SIGTERM (and SIGCONT: a stopped process would not act on it) to the
  // group now, SIGKILL after grace; with no grace, SIGKILL now.
  void end_group(Clock::duration grace);
  // SIGKILL to the group now.
  void kill_group();

  const std::string& output() const noexcept { return output_; }
  std::string& output() noexcept { return output_; }
  // What is left of stdout once its first line was taken (a pool's
  // progress line): looked at afresh for the next newline.
  void keep_output(std::string rest) {
    output_ = std::move(rest);
    scanned_ = 0;
  }
  bool exited() const noexcept { return exited_; }
  std::size_t max_output() const noexcept { return rules_.max_output; }
  bool input_written() const noexcept { return written_ == rules_.input.size(); }
  // Exited came after kPipeGrace: processes the child left behind still
  // held its stdout or stderr.
  bool pipes_held_open() const noexcept { return pipes_held_; }

 private:
  std::optional<Event> check_deadlines(Clock::time_point now);
  int poll_timeout_ms(Clock::time_point now, std::optional<Clock::time_point> wake_at) const;
  std::optional<Event> write_stdin();
  std::optional<Event> read_stdout();
  void read_stderr();
  void read_progress();
  void see_exit();
  std::optional<Event> after_exit(Clock::time_point now);

  ChildProcess& child_;
  StderrLines& stderr_;
  int stop_fd_;
  Rules rules_;
  std::string output_;
  std::size_t scanned_ = 0;  // how much of output_ holds no '\n'
  std::size_t written_ = 0;
  bool exited_ = false;
  bool stdin_refused_ = false;
  bool stdout_closed_ = false;
  bool pipes_held_ = false;
  std::optional<Clock::time_point> kill_at_;
  Clock::time_point pipes_until_;
};

}  // namespace echomq::daemon
