#include "process/child_io_pump.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "process/poll_set.h"

namespace echomq::daemon {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;  // a default pipe's capacity
constexpr std::size_t kWriteChunk = 1 << 20;   // the kernel takes what fits

}  // namespace

PipeRead read_pipe(Fd& fd, std::string& into) {
  if (!fd) return PipeRead::Eof;
  char buffer[kReadChunk];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    into.append(buffer, static_cast<std::size_t>(n));
    return PipeRead::Data;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return PipeRead::Again;
  fd.reset();
  return PipeRead::Eof;
}

ChildIoPump::ChildIoPump(ChildProcess& child, StderrLines& stderr_lines, int stop_fd, Rules rules)
    : child_(child), stderr_(stderr_lines), stop_fd_(stop_fd), rules_(rules) {
  if (rules_.input.empty() && rules_.close_stdin) child_.stdin_pipe().reset();
}

ChildIoPump::Event ChildIoPump::run(std::optional<Clock::time_point> wake_at) {
  while (true) {
    const Clock::time_point now = Clock::now();
    if (auto event = check_deadlines(now)) return *event;
    if (wake_at && now >= *wake_at) return Event::WokeUp;

    PollSet fds;
    Fd& in = child_.stdin_pipe();
    const int in_i = input_written() ? -1 : fds.watch(in.get(), POLLOUT);  // -1 once closed
    const int out_i = fds.watch(child_.stdout_pipe().get(), POLLIN);
    const int err_i = fds.watch(child_.stderr_pipe().get(), POLLIN);
    const int progress_i = fds.watch(child_.progress_pipe().get(), POLLIN);
    const int stop_i = fds.watch(stop_fd_, POLLIN);
    const int exit_i = exited_ ? -1 : fds.watch(child_.exit_fd(), POLLIN);
    if (fds.wait(poll_timeout_ms(now, wake_at)) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }

    std::optional<Event> event;
    if (fds.ready(in_i, POLLOUT | POLLERR | POLLHUP)) event = write_stdin();
    if (fds.ready(err_i, POLLIN | POLLERR | POLLHUP)) read_stderr();
    if (fds.ready(progress_i, POLLIN | POLLERR | POLLHUP)) read_progress();
    if (fds.ready(out_i, POLLIN | POLLERR | POLLHUP)) {
      if (auto e = read_stdout(); e && (!event || *e != Event::StdoutClosed)) event = e;
    }
    if (fds.ready(exit_i, POLLIN) || (!exited_ && exit_i < 0 && child_.has_exited())) see_exit();
    if (event) return *event;
    if (fds.ready(stop_i, POLLIN)) {
      stop_fd_ = -1;  // told once; the policy decides what follows
      return Event::Stopped;
    }
    if (exited_) {
      if (auto e = after_exit(Clock::now())) return *e;
    }
  }
}

std::optional<ChildIoPump::Event> ChildIoPump::check_deadlines(Clock::time_point now) {
  if (kill_at_ && now >= *kill_at_) kill_group();
  if (exited_) return after_exit(now);
  if (rules_.timeout_at && now >= *rules_.timeout_at) {
    rules_.timeout_at.reset();
    return Event::TimedOut;
  }
  return std::nullopt;
}

int ChildIoPump::poll_timeout_ms(Clock::time_point now, std::optional<Clock::time_point> wake_at) const {
  std::optional<Clock::time_point> next = wake_at;
  const auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!next || *t < *next)) next = t;
  };
  consider(kill_at_);
  if (exited_) {
    consider(pipes_until_);
  } else {
    consider(rules_.timeout_at);
    if (child_.exit_fd() < 0) consider(now + kExitTick);
  }
  if (!next) return -1;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::clamp<long long>(wait, 0, 60 * 60 * 1000));
}

std::optional<ChildIoPump::Event> ChildIoPump::write_stdin() {
  Fd& in = child_.stdin_pipe();
  const std::size_t chunk = std::min(rules_.input.size() - written_, kWriteChunk);
  const ssize_t n = ::write(in.get(), rules_.input.data() + written_, chunk);
  if (n >= 0) {
    written_ += static_cast<std::size_t>(n);
    if (input_written() && rules_.close_stdin) in.reset();  // EOF: the whole input is in
    return std::nullopt;
  }
  if (errno == EAGAIN || errno == EINTR) return std::nullopt;
  // EPIPE: the child closed its stdin, or exited without reading it all.
  in.reset();
  if (stdin_refused_) return std::nullopt;
  stdin_refused_ = true;
  return Event::StdinRefused;
}

std::optional<ChildIoPump::Event> ChildIoPump::read_stdout() {
  const PipeRead r = read_pipe(child_.stdout_pipe(), output_);
  if (r == PipeRead::Eof) {
    if (exited_ || stdout_closed_) return std::nullopt;
    stdout_closed_ = true;
    return Event::StdoutClosed;
  }
  if (r != PipeRead::Data) return std::nullopt;
  if (rules_.until_newline) {
    // Only the bytes not yet looked at: a long reply arrives in many reads.
    const bool line = output_.find('\n', scanned_) != std::string::npos;
    scanned_ = output_.size();
    if (line) return Event::Answered;
  }
  if (output_.size() > rules_.max_output) {
    child_.stdout_pipe().reset();
    return Event::OutputExceeded;
  }
  return std::nullopt;
}

void ChildIoPump::read_stderr() {
  std::string bytes;
  if (read_pipe(child_.stderr_pipe(), bytes) == PipeRead::Data) stderr_.feed(bytes);
}

void ChildIoPump::read_progress() {
  std::string bytes;
  const PipeRead r = read_pipe(child_.progress_pipe(), bytes);
  if (rules_.progress == nullptr) return;
  if (r == PipeRead::Data) rules_.progress->feed(bytes);
  if (r == PipeRead::Eof) rules_.progress->finish();
}

void ChildIoPump::see_exit() {
  exited_ = true;
  pipes_until_ = Clock::now() + kPipeGrace;
  child_.stdin_pipe().reset();  // nobody left to read it
}

std::optional<ChildIoPump::Event> ChildIoPump::after_exit(Clock::time_point now) {
  if (!child_.stdout_pipe() && !child_.stderr_pipe() && !child_.progress_pipe()) return Event::Exited;
  if (now < pipes_until_) return std::nullopt;
  pipes_held_ = true;
  return Event::Exited;
}

void ChildIoPump::end_group(Clock::duration grace) {
  if (grace <= Clock::duration::zero()) {
    kill_group();
    return;
  }
  child_.terminate_group(SIGTERM);
  // A stopped process would not act on SIGTERM until continued.
  child_.terminate_group(SIGCONT);
  kill_at_ = Clock::now() + grace;
}

void ChildIoPump::kill_group() {
  kill_at_.reset();
  child_.terminate_group(SIGKILL);
}

}  // namespace echomq::daemon
