// `emq web` as a real process for the tests: started on a free loopback
// port (--listen 127.0.0.1:0, the port read from the line it prints),
// stopped with SIGTERM and reaped by the destructor.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../emq_process.h"

namespace echomq::test {

class EmqWeb {
 public:
  // args after "web"; env as run_emq takes it (EMQ_URL and the like).
  EmqWeb(const std::vector<std::string>& args, const Env& env) {
    int out[2];
    detail::make_pipe(out);
    std::vector<std::string> argv_s = {emq_binary(), "web"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s = detail::child_env(env);
    std::vector<char*> argv, envp;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = out[0];
    read_until_served();
  }
  ~EmqWeb() { stop(); }
  EmqWeb(const EmqWeb&) = delete;
  EmqWeb& operator=(const EmqWeb&) = delete;

  // 0 when it exited before serving (output() says why).
  int port() const { return port_; }
  const std::string& output() const { return output_; }

  // SIGTERM, then the exit code (-1 when it did not exit by itself);
  // output() then holds everything it wrote.
  int stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    drain(std::chrono::seconds(5));
    if (out_ >= 0) ::close(out_);
    out_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

  // For a process that should refuse to start: waits for its exit code.
  int wait_exit() {
    drain(std::chrono::seconds(10));
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  // Reads its output until the "serving http://HOST:PORT/" line, or EOF.
  void read_until_served() {
    const std::regex served("serving http://[^ ]*:([0-9]+)/");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::smatch m;
    while (!std::regex_search(output_, m, served)) {
      if (!read_some(until)) return;
    }
    port_ = std::stoi(m[1].str());
  }

  void drain(std::chrono::seconds deadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (read_some(until)) {
    }
  }

  bool read_some(std::chrono::steady_clock::time_point until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (out_ < 0 || left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return false;
    output_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
  std::string output_;
};

}  // namespace echomq::test
