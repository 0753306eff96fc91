#include "handlers/pool_process.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "handlers/pool_protocol.h"
#include "process/poll_set.h"

namespace echomq::daemon {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;  // a default pipe's capacity
constexpr std::size_t kWriteChunk = 1 << 20;   // the kernel takes what fits
// Without a pidfd, how often the loop looks for the process's exit.
constexpr std::chrono::milliseconds kExitTick{10};
// After its stdin refused the frame or its stdout hit EOF, how long a
// process has to exit (a dying process closes its pipes a moment before
// its exit shows, and its status and stderr make the better error) before
// the job fails for the closed pipe itself.
constexpr std::chrono::milliseconds kPipeGoneGrace{1000};

Outcome failure(Outcome::Verdict verdict, std::string error) {
  Outcome out;
  out.verdict = verdict;
  out.error = std::move(error);
  return out;
}

// Foreign text, made safe to quote in a log line or an error field.
std::string quote_text(std::string_view text) {
  constexpr std::size_t kMax = 120;
  std::string cut(text.substr(0, kMax));
  std::string q = nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > kMax ? q + "…" : q;
}

int poll_timeout_ms(std::optional<PoolProcess::Clock::time_point> until, bool tick) {
  long long wait = -1;
  if (until) {
    wait = std::chrono::ceil<std::chrono::milliseconds>(*until - PoolProcess::Clock::now()).count();
    wait = std::clamp<long long>(wait, 0, 60 * 60 * 1000);
  }
  if (tick && (wait < 0 || wait > kExitTick.count())) wait = kExitTick.count();
  return static_cast<int>(wait);
}

}  // namespace

PoolProcess::PoolProcess(const ChildProcess::Params& params, const std::string& queue)
    : queue_(queue), child_(params), stderr_(queue, std::to_string(child_.pid()), "pid") {
  for (Fd* fd : {&child_.stdin_pipe(), &child_.stdout_pipe(), &child_.stderr_pipe()}) set_nonblocking(fd->get());
}

std::string PoolProcess::name() const { return "pool process " + std::to_string(child_.pid()); }

PoolProcess::Read PoolProcess::read_stderr() {
  Fd& fd = child_.stderr_pipe();
  if (!fd) return Read::Eof;
  char buffer[kReadChunk];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    stderr_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    return Read::Data;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Read::Again;
  fd.reset();
  return Read::Eof;
}

PoolProcess::Read PoolProcess::read_stdout() {
  Fd& fd = child_.stdout_pipe();
  if (!fd) return Read::Eof;
  char buffer[kReadChunk];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    buffer_.append(buffer, static_cast<std::size_t>(n));
    return Read::Data;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Read::Again;
  fd.reset();
  return Read::Eof;
}

void PoolProcess::drain_stderr() {
  while (read_stderr() == Read::Data) {
  }
}

bool PoolProcess::take_line(std::string& line, std::string& rest) {
  // Only the bytes not yet looked at: a long reply arrives in many reads.
  const std::size_t newline = buffer_.find('\n', scanned_);
  scanned_ = buffer_.size();
  if (newline == std::string::npos) return false;
  scanned_ = 0;
  line = buffer_.substr(0, newline);
  rest = buffer_.substr(newline + 1);
  buffer_.clear();
  return true;
}

ExitStatus PoolProcess::reap() {
  // Whatever it left behind in its group goes with it; its pid (a zombie
  // by now) still holds the group id, so the signal cannot go astray.
  child_.terminate_group(SIGKILL);
  drain_stderr();
  stderr_.finish();
  const ExitStatus status = child_.wait();
  child_.stdin_pipe().reset();
  child_.stdout_pipe().reset();
  child_.stderr_pipe().reset();
  return status;
}

std::string PoolProcess::describe_exit(const ExitStatus& status) const {
  const std::string tail = stderr_.tail();
  return status.describe() + (tail.empty() ? "" : ": " + tail);
}

PoolProcess::Turn PoolProcess::broken(Outcome::Verdict verdict, std::string error, std::string why) {
  Turn turn;
  turn.outcome = failure(verdict, std::move(error));
  turn.then = Turn::Then::Broken;
  turn.why = std::move(why);
  return turn;
}

PoolProcess::Turn PoolProcess::reply_turn(const std::string& line, const Job& job, bool leftover) {
  Reply reply;
  if (std::string problem = parse_reply_frame(line, reply); !problem.empty()) {
    return broken(Outcome::Verdict::Retry, name() + ": " + problem, problem);
  }
  if (reply.id != job.id) {
    std::string why = "answered for job " + quote_text(reply.id) + " while running " + job.id;
    return broken(Outcome::Verdict::Retry, name() + " " + why, why);
  }
  Turn turn;
  turn.answered = true;
  if (reply.ok) {
    turn.outcome.verdict = Outcome::Verdict::Complete;
    turn.outcome.result = std::move(reply.result);
  } else {
    turn.outcome = failure(reply.permanent ? Outcome::Verdict::Dead : Outcome::Verdict::Retry,
                           reply.error.empty() ? "the pool handler failed the job without an error text"
                                               : std::move(reply.error));
  }
  if (leftover) {
    // The next job would read these bytes as its reply.
    turn.then = Turn::Then::Broken;
    turn.why = "wrote more than one line for job " + job.id;
  }
  return turn;
}

PoolProcess::Turn PoolProcess::run_job(const Job& job, const HandlerConfig& config, const StopToken& stop,
                                       std::optional<Clock::time_point> timeout_at) {
  ++jobs_;
  buffer_.clear();
  scanned_ = 0;
  const std::string frame = encode_job_frame(job);
  const std::size_t limit = static_cast<std::size_t>(std::max<std::int64_t>(config.max_output_bytes, 0));
  std::size_t written = 0;
  std::optional<Clock::time_point> pipe_gone_at;  // see kPipeGoneGrace
  std::string pipe_gone_why;
  std::string line;
  std::string rest;

  while (true) {
    if (timeout_at && Clock::now() >= *timeout_at) {
      // Replaced, but not counted towards the backoff: a slow job says
      // nothing about the next process's health.
      Turn turn = broken(Outcome::Verdict::Retry, fmt::format("timed out after {}s", config.timeout_s),
                         fmt::format("ran past timeout_s ({}s) on job {}", config.timeout_s, job.id));
      turn.then = Turn::Then::Replace;
      return turn;
    }
    Fd& in = child_.stdin_pipe();
    PollSet fds;
    const int in_i = written < frame.size() && in ? fds.watch(in.get(), POLLOUT) : -1;
    const int out_i = fds.watch(child_.stdout_pipe().get(), POLLIN);
    const int err_i = fds.watch(child_.stderr_pipe().get(), POLLIN);
    const int stop_i = fds.watch(stop.fd(), POLLIN);
    const int exit_i = fds.watch(child_.exit_fd(), POLLIN);
    std::optional<Clock::time_point> wake_at = timeout_at;
    if (pipe_gone_at && (!wake_at || *pipe_gone_at + kPipeGoneGrace < *wake_at)) {
      wake_at = *pipe_gone_at + kPipeGoneGrace;
    }
    if (fds.wait(poll_timeout_ms(wake_at, exit_i < 0)) < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::string("poll failed: ") + std::generic_category().message(errno);
      return broken(Outcome::Verdict::Retry, name() + ": " + why, why);
    }

    if (fds.ready(stop_i, POLLIN)) {
      Turn turn;
      turn.outcome = failure(Outcome::Verdict::Retry, "stopped by the daemon");
      turn.then = Turn::Then::Replace;
      return turn;
    }
    if (fds.ready(in_i, POLLOUT | POLLERR | POLLHUP)) {
      const std::size_t chunk = std::min(frame.size() - written, kWriteChunk);
      const ssize_t w = ::write(in.get(), frame.data() + written, chunk);
      if (w >= 0) {
        written += static_cast<std::size_t>(w);
      } else if (errno != EAGAIN && errno != EINTR) {
        // EPIPE: it closed its stdin, most likely by dying. Its exit (and
        // so its status and stderr) follows within moments; give it those.
        in.reset();
        if (!pipe_gone_at) pipe_gone_at = Clock::now();
        pipe_gone_why = "stopped reading its stdin before job " + job.id + " was written";
      }
    }
    if (fds.ready(err_i, POLLIN | POLLERR | POLLHUP)) read_stderr();

    bool exited = fds.ready(exit_i, POLLIN) || (exit_i < 0 && child_.has_exited());
    if (fds.ready(out_i, POLLIN | POLLERR | POLLHUP) || exited) {
      // Once it has exited, all it wrote is in the pipe: take every byte.
      Read r = read_stdout();
      while (exited && r == Read::Data && buffer_.find('\n', scanned_) == std::string::npos &&
             buffer_.size() <= limit) {
        scanned_ = buffer_.size();
        r = read_stdout();
      }
      if (take_line(line, rest)) {
        if (line.size() > limit) {
          const std::string why = "wrote a reply of " + std::to_string(line.size()) +
                                  " bytes, past max_output_bytes (" + std::to_string(limit) + ")";
          return broken(Outcome::Verdict::Retry, name() + " " + why, why);
        }
        Turn turn = reply_turn(line, job, !rest.empty() || written < frame.size());
        if (exited && turn.then == Turn::Then::Keep) {
          turn.then = Turn::Then::Broken;
          turn.why = "exited after its reply (" + describe_exit(reap()) + ")";
        }
        return turn;
      }
      if (buffer_.size() > limit) {
        const std::string why = "wrote more than max_output_bytes (" + std::to_string(limit) +
                                ") to stdout without ending the line";
        return broken(Outcome::Verdict::Retry, name() + " " + why, why);
      }
      if (exited) {
        const std::string why = "exited during the job (" + describe_exit(reap()) + ")";
        return broken(Outcome::Verdict::Retry, name() + " " + why, why);
      }
      if (r == Read::Eof) {
        pipe_gone_at = Clock::now();
        pipe_gone_why = "closed its stdout during job " + job.id;
      }
    }
    if (pipe_gone_at && Clock::now() - *pipe_gone_at >= kPipeGoneGrace) {
      return broken(Outcome::Verdict::Retry, name() + " " + pipe_gone_why, pipe_gone_why);
    }
  }
}

PoolProcess::Idle PoolProcess::pump_idle() {
  drain_stderr();
  Idle idle;
  const Read r = read_stdout();
  if (child_.has_exited()) {
    idle.broken = true;
    idle.why = "exited while it had no job (" + describe_exit(reap()) + ")";
  } else if (r == Read::Data) {
    idle.broken = true;
    idle.why = "wrote to stdout while it had no job: " + quote_text(buffer_);
  } else if (r == Read::Eof) {
    // A dying process closes its pipes a moment before its exit shows:
    // wait for the exit (the better report) before calling it this.
    if (!stdout_closed_at_) stdout_closed_at_ = Clock::now();
    if (Clock::now() >= *idle_deadline()) {
      idle.broken = true;
      idle.why = "closed its stdout";
    }
  }
  return idle;
}

std::optional<PoolProcess::Clock::time_point> PoolProcess::idle_deadline() const {
  if (!stdout_closed_at_) return std::nullopt;
  return *stdout_closed_at_ + kPipeGoneGrace;
}

void PoolProcess::close_stdin() noexcept { child_.stdin_pipe().reset(); }

void PoolProcess::terminate() noexcept {
  child_.terminate_group(SIGTERM);
  // A stopped process would not act on SIGTERM until continued.
  child_.terminate_group(SIGCONT);
}

void PoolProcess::kill() noexcept { child_.terminate_group(SIGKILL); }

bool PoolProcess::pump_ending() {
  drain_stderr();
  while (read_stdout() == Read::Data) buffer_.clear();
  scanned_ = 0;
  if (!child_.has_exited()) return false;
  const ExitStatus status = reap();
  spdlog::debug("queue={} pid={}: pool process ended: {}", queue_, child_.pid(), status.describe());
  return true;
}

}  // namespace echomq::daemon
