// Runs the built emq binary as a child process, the way an operator or a
// script would: argv, a clean environment, bytes on stdin; collects stdout,
// stderr and the exit code. Header-only, for tests/emq.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace echomq::test {

struct EmqResult {
  int exit_code = -1;  // -1: killed (see err)
  std::string out;
  std::string err;
  long max_rss_kb = 0;  // the child's peak resident memory
};

using Env = std::vector<std::pair<std::string, std::string>>;

inline std::string emq_binary() { return std::string(EMQ_BIN_DIR) + "/emq"; }

namespace detail {
inline void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
}

// The test's own environment without any EMQ_* variable, plus env: so the
// server a test means is the only one emq can find.
inline std::vector<std::string> child_env(const Env& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "EMQ_", 4) != 0) out.emplace_back(*e);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}
}  // namespace detail

// Runs emq with args; stdin gets input and is then closed. A child that has
// not ended within the deadline is killed and reported with exit_code -1.
// A max_memory (bytes of address space, RLIMIT_AS) keeps a runaway child
// from taking the machine's memory with it.
inline EmqResult run_emq(const std::vector<std::string>& args, const Env& env = {}, const std::string& input = {},
                         std::chrono::milliseconds deadline = std::chrono::seconds(30), rlim_t max_memory = 0) {
  // A child that exits before reading all its input must not kill the test
  // with SIGPIPE; the child gets the default back before exec.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2], err[2];
  detail::make_pipe(in);
  detail::make_pipe(out);
  detail::make_pipe(err);

  std::vector<std::string> argv_s = {emq_binary()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = detail::child_env(env);
  std::vector<char*> argv, envp;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    const rlimit cap{max_memory, max_memory};
    if (max_memory > 0) ::setrlimit(RLIMIT_AS, &cap);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  int to_child = in[1];
  ::fcntl(to_child, F_SETFL, O_NONBLOCK);
  if (input.empty()) {
    ::close(to_child);
    to_child = -1;
  }

  EmqResult r;
  std::size_t written = 0;
  int from_out = out[0], from_err = err[0];
  const auto until = std::chrono::steady_clock::now() + deadline;
  bool killed = false;
  while (from_out >= 0 || from_err >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd fds[3];
    nfds_t n = 0;
    auto watch = [&](int fd, short events) {
      if (fd >= 0) fds[n++] = {fd, events, 0};
    };
    watch(from_out, POLLIN);
    watch(from_err, POLLIN);
    watch(to_child, POLLOUT);
    if (::poll(fds, n, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      int fd = fds[i].fd;
      if (fd == to_child) {
        ssize_t w = ::write(fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN) written = input.size();  // the child closed stdin
        if (written == input.size()) {
          ::close(to_child);
          to_child = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t got = ::read(fd, buf, sizeof buf);
      std::string& sink = fd == from_out ? r.out : r.err;
      if (got > 0) {
        sink.append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fd);
        (fd == from_out ? from_out : from_err) = -1;
      }
    }
  }
  for (int fd : {to_child, from_out, from_err}) {
    if (fd >= 0) ::close(fd);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  r.max_rss_kb = usage.ru_maxrss;
  if (killed) {
    r.err += "\n[test: emq did not exit within the deadline and was killed]";
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

}  // namespace echomq::test
