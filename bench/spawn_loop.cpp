// emq_bench_spawn_loop: the ceiling of the exec handler kind, one process
// per job with no daemon around it. `threads` threads each spawn the
// program, write the payload to its stdin and close it, read its stdout and
// stderr to the end, and wait for it, until `jobs` have exited 0. A spawn
// gets what any careful runner gives a child, as the exec handler does:
// three close-on-exec pipes, descriptors past 2 closed, a process group of
// its own, an empty signal mask and default dispositions, a two-variable
// environment. Prints {"jobs":N,"seconds":S,"rate":R}.
#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct PipeEnds {
  int read = -1;
  int write = -1;
};

PipeEnds make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  return {fds[0], fds[1]};
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads both outputs to their end, as a runner must (a child blocked on a
// full pipe never exits).
void drain(int out, int err) {
  pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
  int open = 2;
  char buf[4096];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (pollfd& p : fds) {
      if (p.fd < 0 || p.revents == 0) continue;
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      p.fd = -1;  // poll skips negative descriptors
      --open;
    }
  }
}

bool run_one(const std::string& program, const std::string& payload) {
  PipeEnds in = make_pipe(), out = make_pipe(), err = make_pipe();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::string path = "PATH=/usr/bin:/bin", lang = "LANG=C.UTF-8";
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  char* envp[] = {path.data(), lang.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  if (rc != 0) {
    close_fd(in.write);
    close_fd(out.read);
    close_fd(err.read);
    throw std::runtime_error("posix_spawn " + program + ": " + std::strerror(rc));
  }

  // Small payloads fit the pipe: one write, then EOF for the child.
  const ssize_t wrote = ::write(in.write, payload.data(), payload.size());
  close_fd(in.write);
  drain(out.read, err.read);
  close_fd(out.read);
  close_fd(err.read);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return wrote == static_cast<ssize_t>(payload.size()) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Spawn a program once per job from N threads, no daemon."};
  std::string program;
  std::string payload = "x";
  long long jobs = 5000;
  int threads = 1;
  app.add_option("--program", program, "the handler program (absolute path)")->required();
  app.add_option("--jobs", jobs, "how many runs")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "runs at once")->check(CLI::Range(1, 1024));
  app.add_option("--payload", payload, "written to each run's stdin");
  CLI11_PARSE(app, argc, argv);
  // A child that exits before reading its stdin must not kill us.
  ::signal(SIGPIPE, SIG_IGN);

  std::atomic<long long> next{0}, ok{0};
  std::atomic<bool> broken{false};
  std::vector<std::thread> pool;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      try {
        while (!broken && next.fetch_add(1) < jobs) {
          if (run_one(program, payload)) ++ok;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "emq_bench_spawn_loop: %s\n", e.what());
        broken = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (broken) return 1;
  std::printf("{\"jobs\":%lld,\"seconds\":%.6f,\"rate\":%.1f}\n", ok.load(), seconds,
              static_cast<double>(ok.load()) / seconds);
  return ok == jobs ? 0 : 3;
}
