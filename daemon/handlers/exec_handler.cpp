#include "handlers/exec_handler.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <system_error>
#include <utility>

#include "process/child_process.h"
#include "process/poll_set.h"
#include "process/sigpipe_block.h"
#include "process/stderr_lines.h"

namespace echomq::daemon {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = 64 * 1024;   // a default pipe's capacity
constexpr std::size_t kWriteChunk = 1 << 20;    // the kernel takes what fits
// Without a pidfd, how often the loop looks for the child's exit.
constexpr std::chrono::milliseconds kExitTick{10};

// Clamped to 30 years, so an absurd timeout_s cannot overflow the clock.
Clock::duration seconds(double s) {
  const double bounded = std::min(std::max(s, 0.0), 1e9);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bounded));
}

Outcome failure(Outcome::Verdict verdict, std::string error) {
  Outcome out;
  out.verdict = verdict;
  out.error = std::move(error);
  return out;
}

// Why the daemon ended the job before the handler did; the first wins.
enum class Ending { None, TimedOut, Stopped, OutputExceeded };

// One job's process, from the payload's first byte to the reaped exit: a
// single poll() loop over stdin, stdout, stderr, the stop token, the
// child's exit and the deadlines, so no pipe can block the daemon.
class JobRun {
 public:
  JobRun(const HandlerConfig& config, const Job& job, const StopToken& stop, ChildProcess& child)
      : config_(config), job_(job), stop_(stop), child_(child), stderr_(job.queue, job.id) {}

  Outcome run() {
    const Clock::time_point started = Clock::now();
    if (config_.timeout_s > 0) timeout_at_ = started + seconds(config_.timeout_s);
    if (job_.payload.empty()) child_.stdin_pipe().reset();
    for (Fd* fd : {&child_.stdin_pipe(), &child_.stdout_pipe(), &child_.stderr_pipe()}) {
      if (*fd) set_nonblocking(fd->get());
    }
    while (!done()) step();
    // Whatever the job left behind in its group goes with it.
    child_.terminate_group(SIGKILL);
    const ExitStatus status = child_.wait();
    stderr_.finish();
    spdlog::debug("queue={} job={}: {} after {} ms", job_.queue, job_.id, status.describe(),
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count());
    return outcome(status);
  }

 private:
  bool done() {
    if (!exited_) return false;
    if (!child_.stdout_pipe() && !child_.stderr_pipe()) return true;
    if (Clock::now() < pipes_until_) return false;
    spdlog::warn("queue={} job={}: the handler exited, but processes it started still held its "
                 "stdout or stderr open after {} ms; killing its process group",
                 job_.queue, job_.id, ExecHandler::kPipeGrace.count());
    return true;
  }

  void step() {
    const Clock::time_point now = Clock::now();
    if (timeout_at_ && !exited_ && now >= *timeout_at_) {
      timeout_at_.reset();
      begin_ending(Ending::TimedOut);
    }
    if (kill_at_ && now >= *kill_at_) {
      kill_at_.reset();
      child_.terminate_group(SIGKILL);
    }

    PollSet fds;
    const int in = fds.watch(child_.stdin_pipe().get(), POLLOUT);
    const int out = fds.watch(child_.stdout_pipe().get(), POLLIN);
    const int err = fds.watch(child_.stderr_pipe().get(), POLLIN);
    const int stop = ending_ == Ending::None ? fds.watch(stop_.fd(), POLLIN) : -1;
    if (!exited_) fds.watch(child_.exit_fd(), POLLIN);

    if (fds.wait(poll_timeout_ms(now)) < 0) {
      if (errno == EINTR) return;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds.ready(in, POLLOUT | POLLERR | POLLHUP)) write_stdin();
    if (fds.ready(out, POLLIN | POLLERR | POLLHUP)) read_stdout();
    if (fds.ready(err, POLLIN | POLLERR | POLLHUP)) read_stderr();
    if (fds.ready(stop, POLLIN)) begin_ending(Ending::Stopped);
    if (!exited_ && child_.has_exited()) {
      exited_ = true;
      pipes_until_ = Clock::now() + ExecHandler::kPipeGrace;
      child_.stdin_pipe().reset();  // nobody left to read it
    }
  }

  int poll_timeout_ms(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    const auto consider = [&](const std::optional<Clock::time_point>& t) {
      if (t && (!next || *t < *next)) next = t;
    };
    if (exited_) {
      consider(pipes_until_);
    } else {
      consider(timeout_at_);
      consider(kill_at_);
      if (child_.exit_fd() < 0) consider(now + kExitTick);
    }
    if (!next) return -1;
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
    return static_cast<int>(std::clamp<long long>(wait, 0, 60 * 60 * 1000));
  }

  void write_stdin() {
    Fd& in = child_.stdin_pipe();
    const std::string& payload = job_.payload;
    const std::size_t chunk = std::min(payload.size() - written_, kWriteChunk);
    const ssize_t n = ::write(in.get(), payload.data() + written_, chunk);
    if (n >= 0) {
      written_ += static_cast<std::size_t>(n);
      if (written_ == payload.size()) in.reset();  // EOF: the whole payload is in
      return;
    }
    if (errno == EAGAIN || errno == EINTR) return;
    // EPIPE: the handler closed its stdin or exited without reading it
    // all. Not a failure by itself; its exit status says how the job went.
    spdlog::debug("queue={} job={}: handler stopped reading stdin after {} of {} bytes: {}",
                  job_.queue, job_.id, written_, payload.size(),
                  std::generic_category().message(errno));
    in.reset();
  }

  // One read per readiness, so a flood on one pipe cannot starve the rest
  // of the loop. Returns the bytes read, or 0 at EOF (the pipe is closed).
  ssize_t read_some(Fd& fd, char* buffer) {
    const ssize_t n = ::read(fd.get(), buffer, kReadChunk);
    if (n > 0) return n;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return -1;
    fd.reset();
    return 0;
  }

  void read_stdout() {
    char buffer[kReadChunk];
    const ssize_t n = read_some(child_.stdout_pipe(), buffer);
    if (n <= 0) return;
    const auto limit = static_cast<std::size_t>(std::max<std::int64_t>(config_.max_output_bytes, 0));
    const auto got = static_cast<std::size_t>(n);
    if (result_.size() + got <= limit) {
      result_.append(buffer, got);
      return;
    }
    if (ending_ == Ending::None) ending_ = Ending::OutputExceeded;
    kill_at_.reset();
    child_.terminate_group(SIGKILL);
    child_.stdout_pipe().reset();
  }

  void read_stderr() {
    char buffer[kReadChunk];
    const ssize_t n = read_some(child_.stderr_pipe(), buffer);
    if (n > 0) stderr_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }

  // SIGTERM to the group now, SIGKILL after kill_grace_s.
  void begin_ending(Ending why) {
    if (ending_ != Ending::None) return;
    ending_ = why;
    if (config_.kill_grace_s <= 0) {
      child_.terminate_group(SIGKILL);
      return;
    }
    child_.terminate_group(SIGTERM);
    // A stopped process would not act on SIGTERM until continued.
    child_.terminate_group(SIGCONT);
    kill_at_ = Clock::now() + seconds(config_.kill_grace_s);
  }

  Outcome outcome(const ExitStatus& status) {
    Outcome::Verdict verdict = Outcome::Verdict::Retry;
    std::string reason;
    switch (ending_) {
      case Ending::Stopped:
        reason = "stopped by the daemon";
        break;
      case Ending::TimedOut:
        reason = fmt::format("timed out after {}s", config_.timeout_s);
        break;
      case Ending::OutputExceeded:
        reason = fmt::format("output exceeded max_output_bytes ({})", config_.max_output_bytes);
        break;
      case Ending::None:
        if (status.success()) {
          Outcome done;
          done.verdict = Outcome::Verdict::Complete;
          done.result = std::move(result_);
          return done;
        }
        if (is_permanent(status)) verdict = Outcome::Verdict::Dead;
        reason = status.describe();
        break;
    }
    const std::string tail = stderr_.tail();
    return failure(verdict, tail.empty() ? reason : reason + ": " + tail);
  }

  bool is_permanent(const ExitStatus& status) const {
    const auto& codes = config_.permanent_exit_codes;
    return status.kind == ExitStatus::Kind::Exited &&
           std::find(codes.begin(), codes.end(), status.code) != codes.end();
  }

  const HandlerConfig& config_;
  const Job& job_;
  const StopToken& stop_;
  ChildProcess& child_;
  StderrLines stderr_;
  std::string result_;
  std::size_t written_ = 0;
  Ending ending_ = Ending::None;
  bool exited_ = false;
  std::optional<Clock::time_point> timeout_at_;
  std::optional<Clock::time_point> kill_at_;
  Clock::time_point pipes_until_;
};

}  // namespace

ExecHandler::ExecHandler(Params params)
    : params_(std::move(params)), env_(params_.handler, params_.secret_env_names, ::environ) {}

void ExecHandler::start() {
  Job probe;
  probe.queue = params_.queue;
  try {
    ChildProcess::check_runnable({params_.handler.command, env_.for_job(probe), params_.handler.cwd});
  } catch (const SpawnError& e) {
    throw std::runtime_error("queue " + params_.queue + ": exec handler: " + e.what());
  }
}

Outcome ExecHandler::run(const Job& job, const StopToken& stop) {
  if (stop.requested()) return failure(Outcome::Verdict::Retry, "stopped by the daemon");
  const SigpipeBlock sigpipe_block;
  try {
    ChildProcess child({params_.handler.command, env_.for_job(job), params_.handler.cwd});
    return JobRun(params_.handler, job, stop, child).run();
  } catch (const SpawnError& e) {
    spdlog::warn("queue={} job={}: {}", job.queue, job.id, e.what());
    return failure(Outcome::Verdict::Retry, e.what());
  } catch (const std::exception& e) {
    // Out of descriptors or memory: the child, if any, was killed and
    // reaped on the way out.
    spdlog::warn("queue={} job={}: exec handler failed: {}", job.queue, job.id, e.what());
    return failure(Outcome::Verdict::Retry, std::string("exec handler failed: ") + e.what());
  }
}

std::unique_ptr<Handler> make_exec_handler(const QueueConfig& queue,
                                           std::vector<std::string> secret_env_names) {
  return std::make_unique<ExecHandler>(
      ExecHandler::Params{queue.name, queue.handler, std::move(secret_env_names)});
}

}  // namespace echomq::daemon
