// The built emqd binary as a real child process, for end-to-end tests: a
// config written to a temp directory, stderr captured to a log file there,
// signals, and an exit status waited for with a deadline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace echomq::test {

class EmqdProcess {
 public:
  // Writes `config_yaml` to <dir>/emqd.yaml and starts emqd on it.
  EmqdProcess(const std::string& config_yaml, std::vector<std::string> extra_args = {},
              std::vector<std::string> extra_env = {});
  ~EmqdProcess();  // SIGKILL if still running
  EmqdProcess(const EmqdProcess&) = delete;
  EmqdProcess& operator=(const EmqdProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string log() const;
  // Waits until the log holds `text`.
  bool wait_log(const std::string& text, std::chrono::milliseconds deadline) const;
  bool wait_ready(std::chrono::milliseconds deadline = std::chrono::seconds(20)) const {
    return wait_log("ready:", deadline);
  }

  void signal(int sig) const;
  // The exit code (or 128+signal), nullopt if it did not exit in time.
  std::optional<int> wait_exit(std::chrono::milliseconds deadline);
  bool running();

 private:
  std::string dir_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs a program to its end; returns exit code and stdout.
struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};
RunResult run_program(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                      std::vector<std::string> extra_env = {});

// Runs `script` with bash (`set -e`) in `dir`, its output to files there
// rather than to pipes: a step silent for longer than run_program reads
// (an install under load) neither loses its output nor is cut off by a
// pipe closed under it. Whatever it started in the background is killed
// when it ends.
RunResult run_script(const std::string& dir, const std::string& script, std::vector<std::string> extra_env = {});

// The built binaries.
std::string emqd_binary();
std::string emq_binary();

}  // namespace echomq::test
