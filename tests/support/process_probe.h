// What the handler-kind tests look at from outside: the handler programs,
// the log, the processes of a group, this process's descriptors and
// children, a private temporary directory.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace echomq::test {

inline std::string handler_program(const std::string& name) { return std::string(EMQ_TEST_HANDLERS) + "/" + name; }

// Replaces the default logger with one that keeps its lines in memory, for
// as long as it lives.
class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(20000)), previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("test", sink_);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Lines as "<level> <message>", oldest first.
  std::vector<std::string> lines() const {
    std::vector<std::string> out = sink_->last_formatted();
    for (auto& line : out) {
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    }
    return out;
  }
  bool contains(const std::string& text) const {
    for (const auto& line : lines()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

struct ProcStat {
  pid_t pid = 0;
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

// /proc/<pid>/stat, read past the command name (which may hold spaces and
// parentheses). False when the process is gone.
inline bool read_proc_stat(pid_t pid, ProcStat& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(text.substr(close + 1));
  out.pid = pid;
  rest >> out.state >> out.ppid >> out.pgrp;
  return static_cast<bool>(rest);
}

// Processes of the group that are still alive (zombies excluded: they are
// dead, waiting for whoever inherited them to reap them).
inline std::vector<pid_t> live_processes_in_group(pid_t pgid) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcStat st;
    if (read_proc_stat(static_cast<pid_t>(std::stoi(name)), st) && st.pgrp == pgid && st.state != 'Z' &&
        st.state != 'X') {
      out.push_back(st.pid);
    }
  }
  return out;
}

// No process at all, not even a zombie, is left in the group.
inline bool group_gone(pid_t pgid) { return ::kill(-pgid, 0) == -1 && errno == ESRCH; }

// This process has no child at all, running or zombie.
inline bool has_no_children() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

inline std::set<int> open_fds() {
  std::set<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    out.insert(std::stoi(entry.path().filename().string()));
  }
  return out;
}

// "pgid=1234" in a handler's output or error text; 0 when absent.
inline pid_t pgid_in(const std::string& text) {
  const auto at = text.find("pgid=");
  if (at == std::string::npos) return 0;
  const std::string digits = text.substr(at + 5, text.find_first_not_of("0123456789", at + 5) - (at + 5));
  return digits.empty() ? 0 : static_cast<pid_t>(std::stoi(digits));
}

// The descriptors fd_dump.sh lists ("... N -> target" lines), without the
// one ls holds on the directory it lists.
inline std::set<int> fds_in_listing(const std::string& listing) {
  std::set<int> out;
  std::istringstream in(listing);
  std::string line;
  while (std::getline(in, line)) {
    const auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    const auto number_at = line.rfind(' ', arrow - 1) + 1;
    const std::string number = line.substr(number_at, arrow - number_at);
    const std::string target = line.substr(arrow + 4);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
    if (target.rfind("/proc/", 0) == 0 && target.size() >= 3 && target.compare(target.size() - 3, 3, "/fd") == 0) {
      continue;
    }
    out.insert(std::stoi(number));
  }
  return out;
}

// Reads fd until EOF, or until `stop_at` is found when given; gives up at
// the deadline. Returns what was read.
inline std::string read_from(int fd, std::chrono::milliseconds deadline, const std::string& stop_at = "") {
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string out;
  while (stop_at.empty() || out.find(stop_at) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "emq-kinds-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace echomq::test
