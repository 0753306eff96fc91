// One child process, owned: spawned from argv (no shell) as the leader of
// its own process group, with exactly three descriptors (stdin, stdout,
// stderr pipes; and 3 and 4 when the caller gives them), a given
// environment and working directory. The destructor
// kills the whole group and reaps the child, so no path leaves a zombie or
// a stray process behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "process/fd.h"

namespace echomq::daemon {

// Where the kernel gives no pidfd (before 5.2), how often a loop looks for a child's
// exit (ChildProcess::has_exited()).
inline constexpr std::chrono::milliseconds kExitTick{10};

// The child could not be started: the message says what to fix.
class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExitStatus {
  enum class Kind {
    Exited,    // code is the exit code
    Signaled,  // code is the signal number
    Lost,      // someone else reaped the child (SIGCHLD ignored?): unknown
  };
  Kind kind = Kind::Lost;
  int code = -1;

  bool success() const noexcept { return kind == Kind::Exited && code == 0; }
  // "exit code 3", "killed by signal SIGSEGV", "exit status lost ...".
  std::string describe() const;
};

class ChildProcess {
 public:
  struct Params {
    std::vector<std::string> argv;  // argv[0] without a '/' is looked up in env's PATH
    std::vector<std::string> env;   // "NAME=value", the child's whole environment
    std::string cwd;                // empty: the daemon's
    bool progress = false;          // a pipe as the child's descriptor 3 (EMQ_PROGRESS_FD)
    int fd4 = -1;                   // the child's descriptor 4 (the caller keeps its own); -1: closed
  };

  // Throws the SpawnError spawning would throw for a missing program, one
  // that is not executable, or a missing cwd, without spawning anything:
  // for a handler's start(), so a misconfigured queue is refused early.
  static void check_runnable(const Params& params);

  // Throws SpawnError (the program is missing or not executable, cwd is
  // missing, ...) or std::system_error (out of descriptors).
  explicit ChildProcess(const Params& params);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // SIGKILL to the group unless reaped, then reap.
  ~ChildProcess();

  pid_t pid() const noexcept { return pid_; }
  // The process group is the child's pid (it leads its own group).
  pid_t pgid() const noexcept { return pid_; }

  // The parent's ends, close-on-exec and non-blocking. Reset one to close
  // it (stdin: EOF for the child).
  Fd& stdin_pipe() noexcept { return stdin_; }
  Fd& stdout_pipe() noexcept { return stdout_; }
  Fd& stderr_pipe() noexcept { return stderr_; }
  // The read end of the progress pipe; empty when Params::progress was not set.
  Fd& progress_pipe() noexcept { return progress_; }

  // Readable once the child has exited (a pidfd), or -1 where the kernel
  // gives no pidfd: then poll has_exited() on a short tick.
  int exit_fd() const noexcept { return exit_fd_.get(); }

  // Sends sig to every process of the group. A no-op once the child has
  // been reaped: until then its pid (a zombie at worst) holds the group id,
  // so the signal cannot reach an unrelated group that reused the number.
  void terminate_group(int sig) noexcept;

  // Whether the child has exited, without reaping it (it stays a zombie,
  // keeping terminate_group safe for the rest of its group).
  bool has_exited() noexcept;
  // Reaps the child if it has exited.
  std::optional<ExitStatus> try_wait() noexcept;
  // Waits for the child to exit and reaps it.
  ExitStatus wait() noexcept;

 private:
  void reap_status(int wait_status) noexcept;
  void kill_and_reap() noexcept;

  pid_t pid_ = -1;
  bool reaped_ = false;
  ExitStatus status_;
  Fd stdin_;
  Fd stdout_;
  Fd stderr_;
  Fd progress_;
  Fd exit_fd_;
};

}  // namespace echomq::daemon
