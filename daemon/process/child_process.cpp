#include "process/child_process.h"

#include "process/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <system_error>
#include <utility>

namespace echomq::daemon {
namespace {

[[noreturn]] void throw_errno(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return {};
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// execvp's lookup, but in the PATH the child will have rather than the
// daemon's. Relative PATH entries are skipped: they would name a different
// directory once the child has changed to its cwd, and a daemon has no
// business running programs from wherever it happens to be.
std::string resolve_program(const std::string& name, const std::vector<std::string>& env) {
  if (name.empty()) throw SpawnError("the handler's program name (command[0]) is empty");
  if (name.find('/') != std::string::npos) return name;
  const std::string path = env_value(env, "PATH");
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty() && dir[0] == '/') {
      std::string candidate = dir + "/" + name;
      if (is_executable_file(candidate)) return candidate;
    }
    start = end + 1;
  }
  throw SpawnError("cannot run '" + name + "': not found on the handler's PATH (" + path +
                   "); give its absolute path, or set PATH in the handler's env");
}

// Empty when cwd is usable (or not set).
std::string cwd_problem(const std::string& cwd) {
  if (cwd.empty()) return {};
  struct stat st {};
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return "working directory '" + cwd + "' does not exist or is not a directory; create it or fix the handler's cwd";
  }
  if (::access(cwd.c_str(), X_OK) != 0) {
    return "working directory '" + cwd + "' is not accessible to the daemon's user";
  }
  return {};
}

std::string errno_problem(int err) {
  switch (err) {
    case ENOENT: return "no such file (or its #! interpreter is missing); check the handler's command";
    case EACCES: return "permission denied; make it executable (chmod +x) and its directories searchable";
    case ENOEXEC: return "not an executable format; a script needs a #! line";
    default: return std::generic_category().message(err);
  }
}

std::string spawn_failure(const std::string& program, const std::string& cwd, int err) {
  // The child reports a failed chdir with the same errno as a failed
  // exec; look at the directory to tell the two apart.
  std::string problem = cwd_problem(cwd);
  if (problem.empty()) problem = errno_problem(err);
  return "cannot run '" + program + "': " + problem;
}

// pipe2 hands out the lowest free numbers: in a daemon started with stdio
// closed, a pipe end could be 0, 1 or 2, and the dup2 that puts another end
// there would close it first.
void move_above_stdio(Fd& fd) {
  if (fd.get() > 2) return;
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) throw_errno(errno, "fcntl F_DUPFD_CLOEXEC");
  fd.reset(moved);
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  if (abbrev == nullptr) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev;
}

}  // namespace

std::string ExitStatus::describe() const {
  switch (kind) {
    case Kind::Exited: return "exit code " + std::to_string(code);
    case Kind::Signaled: return "killed by signal " + signal_name(code);
    case Kind::Lost: break;
  }
  return "exit status lost (something else reaped the child: is SIGCHLD ignored?)";
}

void ChildProcess::check_runnable(const Params& params) {
  if (params.argv.empty()) {
    throw SpawnError("the handler's command is empty; give at least the program to run");
  }
  const std::string program = resolve_program(params.argv[0], params.env);
  if (std::string problem = cwd_problem(params.cwd); !problem.empty()) {
    throw SpawnError("cannot run '" + program + "': " + problem);
  }
  const std::string seen_from_cwd = program[0] == '/' || params.cwd.empty() ? program : params.cwd + "/" + program;
  struct stat st {};
  if (::stat(seen_from_cwd.c_str(), &st) != 0) {
    throw SpawnError(spawn_failure(program, params.cwd, errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw SpawnError("cannot run '" + program + "': not a regular file; check the handler's command");
  }
  if (::access(seen_from_cwd.c_str(), X_OK) != 0) {
    throw SpawnError(spawn_failure(program, params.cwd, errno));
  }
}

ChildProcess::ChildProcess(const Params& params) {
  if (params.argv.empty()) {
    throw SpawnError("the handler's command is empty; give at least the program to run");
  }
  const std::string program = resolve_program(params.argv[0], params.env);

  Pipe in = make_pipe();
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  Pipe progress;
  if (params.progress) progress = make_pipe();
  for (Fd* fd : {&in.read, &in.write, &out.read, &out.write, &err.read, &err.write, &progress.read, &progress.write}) {
    if (*fd) move_above_stdio(*fd);
  }
  if (progress.read) set_nonblocking(progress.read.get());
  // The child's ends stay blocking: a handler reading its stdin expects to wait.
  for (const Fd* fd : {&in.write, &out.read, &err.read}) set_nonblocking(fd->get());  // every user polls them

  // The signal mask and dispositions are reset in the child: the daemon
  // blocks the signals its signal thread waits for, and may ignore
  // SIGPIPE; a handler that cannot be stopped with SIGTERM is a bad
  // surprise. Its own process group (pgid = its pid) lets a timeout reach
  // everything it started; a new group rather than a new session keeps the
  // daemon's session, which systemd and a terminal's job control expect.
  std::vector<char*> argv = c_strings(params.argv);
  std::vector<char*> envp = c_strings(params.env);
  Spawned child = spawn({program.c_str(), argv.data(), envp.data(), in.read.get(), out.write.get(), err.write.get(),
                         params.cwd.empty() ? nullptr : params.cwd.c_str(), progress.write ? progress.write.get() : -1,
                         params.fd4});
  if (child.error != 0) throw SpawnError(spawn_failure(program, params.cwd, child.error));

  pid_ = child.pid;
  stdin_ = std::move(in.write);
  stdout_ = std::move(out.read);
  stderr_ = std::move(err.read);
  progress_ = std::move(progress.read);
  exit_fd_ = std::move(child.exit_fd);
  // The child's ends (in.read, out.write, err.write) close here, so EOF on
  // stdout and stderr means every process holding them has let go.
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      reaped_(other.reaped_),
      status_(other.status_),
      stdin_(std::move(other.stdin_)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)),
      progress_(std::move(other.progress_)),
      exit_fd_(std::move(other.exit_fd_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = other.reaped_;
    status_ = other.status_;
    stdin_ = std::move(other.stdin_);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
    progress_ = std::move(other.progress_);
    exit_fd_ = std::move(other.exit_fd_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { kill_and_reap(); }

void ChildProcess::kill_and_reap() noexcept {
  if (pid_ <= 0 || reaped_) return;
  terminate_group(SIGKILL);
  wait();
}

void ChildProcess::terminate_group(int sig) noexcept {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, sig);
}

bool ChildProcess::has_exited() noexcept {
  if (pid_ <= 0 || reaped_) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid != 0;
}

void ChildProcess::reap_status(int wait_status) noexcept {
  reaped_ = true;
  exit_fd_.reset();
  if (WIFEXITED(wait_status)) {
    status_ = ExitStatus{ExitStatus::Kind::Exited, WEXITSTATUS(wait_status)};
  } else if (WIFSIGNALED(wait_status)) {
    status_ = ExitStatus{ExitStatus::Kind::Signaled, WTERMSIG(wait_status)};
  }
}

std::optional<ExitStatus> ChildProcess::try_wait() noexcept {
  if (pid_ <= 0 || reaped_) return status_;
  int wait_status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wait_status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return std::nullopt;
  if (r < 0) {
    reaped_ = true;  // ECHILD: not ours to wait for any more
    return status_;
  }
  reap_status(wait_status);
  return status_;
}

ExitStatus ChildProcess::wait() noexcept {
  if (pid_ <= 0 || reaped_) return status_;
  int wait_status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wait_status, 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    reaped_ = true;
    return status_;
  }
  reap_status(wait_status);
  return status_;
}

}  // namespace echomq::daemon
