#include "emqd_process.h"

#include <algorithm>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "wait_for.h"

extern char** environ;

namespace echomq::test {

namespace {
std::string bin_dir() {
#ifdef EMQ_BIN_DIR
  return EMQ_BIN_DIR;
#else
  return "build/bin";
#endif
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// This process's environment with `extra` ("NAME=value") in place of any
// variable of the same name: getenv finds the first of two, not the last.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
      const std::size_t eq = x.find('=');
      return eq != std::string::npos && var.substr(0, eq + 1) == std::string_view(x).substr(0, eq + 1);
    });
    if (!replaced) env.emplace_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}
}  // namespace

std::string emqd_binary() { return bin_dir() + "/emqd"; }
std::string emq_binary() { return bin_dir() + "/emq"; }

EmqdProcess::EmqdProcess(const std::string& config_yaml, std::vector<std::string> extra_args,
                         std::vector<std::string> extra_env) {
  char tmpl[] = "/tmp/emqd-test-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  std::ofstream(dir_ + "/emqd.yaml") << config_yaml;

  std::vector<std::string> args = {emqd_binary(), "--config", dir_ + "/emqd.yaml"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<std::string> env = environment_with(extra_env);
  const std::string log_path = dir_ + "/emqd.log";

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(log, 2);
    ::dup2(log, 1);
    if (log > 2) ::close(log);  // emqd should see only its stdout and stderr there
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
}

EmqdProcess::~EmqdProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (std::getenv("EMQ_KEEP_TEST_DIRS") == nullptr) std::filesystem::remove_all(dir_, ec);
}

std::string EmqdProcess::log() const {
  std::ifstream in(dir_ + "/emqd.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool EmqdProcess::wait_log(const std::string& text, std::chrono::milliseconds deadline) const {
  return wait_for([&] { return log().find(text) != std::string::npos; }, deadline);
}

void EmqdProcess::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

bool EmqdProcess::running() {
  if (status_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

std::optional<int> EmqdProcess::wait_exit(std::chrono::milliseconds deadline) {
  wait_for([&] { return !running(); }, deadline);
  return status_;
}

RunResult run_program(const std::vector<std::string>& argv_in, const std::string& stdin_data,
                      std::vector<std::string> extra_env) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
    throw std::runtime_error("pipe2 failed");
  }
  std::vector<std::string> args = argv_in;
  std::vector<std::string> env = environment_with(extra_env);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  RunResult r;
  std::size_t written = 0;
  if (stdin_data.empty()) {
    ::close(in[1]);
    in[1] = -1;
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd p[3] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}, {in[1], POLLOUT, 0}};
    if (::poll(p, 3, 30000) <= 0) break;
    if (p[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t n = ::write(in[1], stdin_data.data() + written, stdin_data.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == stdin_data.size()) {
        ::close(in[1]);
        in[1] = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = ::read(i == 0 ? out[0] : err[0], buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      } else {
        (i == 0 ? out_open : err_open) = false;
      }
    }
  }
  if (in[1] >= 0) ::close(in[1]);
  ::close(out[0]);
  ::close(err[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

RunResult run_script(const std::string& dir, const std::string& script, std::vector<std::string> extra_env) {
  const std::string out = dir + "/.run_script.out", err = dir + "/.run_script.err";
  const std::string body =
      "set -e\ntrap 'rc=$?; kill $(jobs -p) 2>/dev/null || true; exit $rc' EXIT\ncd '" + dir + "'\n" + script;
  RunResult r = run_program({"/bin/bash", "-c", "/bin/bash -c \"$0\" > '" + out + "' 2> '" + err + "'", body}, "",
                            std::move(extra_env));
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  r.out = read(out);
  r.err = read(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace echomq::test
