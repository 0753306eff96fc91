#include "handlers/pool_process.h"

#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>
#include <utility>

#include "handlers/pool_protocol.h"

namespace echomq::daemon {
namespace {

// After its stdin refused the frame or its stdout hit EOF, how long a
// process has to exit (a dying process closes its pipes a moment before
// its exit shows, and its status and stderr make the better error) before
// the job fails for the closed pipe itself.
constexpr std::chrono::milliseconds kPipeGoneGrace{1000};

// Foreign text, made safe to quote in a log line or an error field.
std::string quote_text(std::string_view text) {
  constexpr std::size_t kMax = 120;
  std::string cut(text.substr(0, kMax));
  std::string q = nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > kMax ? q + "…" : q;
}

}  // namespace

PoolProcess::PoolProcess(const ChildProcess::Params& params, const std::string& queue)
    : queue_(queue), child_(params), stderr_(queue, std::to_string(child_.pid()), "pid") {}

std::string PoolProcess::name() const { return "pool process " + std::to_string(child_.pid()); }

void PoolProcess::drain_stderr() {
  std::string bytes;
  while (read_pipe(child_.stderr_pipe(), bytes) == PipeRead::Data) {
    stderr_.feed(bytes);
    bytes.clear();
  }
}

bool PoolProcess::take_line(std::string& line, std::string& rest) {
  // The pump has seen the newline already (it scans as the reply arrives).
  const std::size_t newline = buffer_.find('\n');
  if (newline == std::string::npos) return false;
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
  turn.outcome = Outcome::failed(verdict, std::move(error));
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
    turn.outcome = Outcome::failed(
        reply.permanent ? Outcome::Verdict::Dead : Outcome::Verdict::Retry,
        reply.error.empty() ? "the pool handler failed the job without an error text" : std::move(reply.error));
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
  const std::string frame = encode_job_frame(job);
  ChildIoPump::Rules rules;
  rules.input = frame;
  rules.close_stdin = false;  // the next job's frame follows on the same stdin
  rules.max_output = static_cast<std::size_t>(std::max<std::int64_t>(config.max_output_bytes, 0));
  rules.until_newline = true;
  rules.timeout_at = timeout_at;
  ChildIoPump pump(child_, stderr_, stop.fd(), rules);
  try {
    return job_turn(pump, job, config);
  } catch (const std::system_error& e) {
    const std::string why = std::string("poll failed: ") + e.what();
    return broken(Outcome::Verdict::Retry, name() + ": " + why, why);
  }
}

PoolProcess::Turn PoolProcess::job_turn(ChildIoPump& pump, const Job& job, const HandlerConfig& config) {
  using Event = ChildIoPump::Event;
  // After its stdin refused the frame or its stdout hit EOF: see kPipeGoneGrace.
  std::optional<Clock::time_point> gone_at;
  std::string gone_why;
  while (true) {
    const std::optional<Clock::time_point> wake_at =
        gone_at ? std::optional<Clock::time_point>(*gone_at + kPipeGoneGrace) : std::nullopt;
    switch (pump.run(wake_at)) {
      case Event::Answered:
        if (std::optional<Turn> turn = answer_turn(pump, job)) return std::move(*turn);
        break;
      case Event::Stopped: {
        Turn turn;
        turn.outcome = Outcome::stopped();
        turn.then = Turn::Then::Replace;
        return turn;
      }
      case Event::TimedOut: {
        // Replaced, but not counted towards the backoff: a slow job says
        // nothing about the next process's health.
        Turn turn = broken(Outcome::Verdict::Retry, fmt::format("timed out after {}s", config.timeout_s),
                           fmt::format("ran past timeout_s ({}s) on job {}", config.timeout_s, job.id));
        turn.then = Turn::Then::Replace;
        return turn;
      }
      case Event::OutputExceeded: {
        const std::string why = "wrote more than max_output_bytes (" + std::to_string(config.max_output_bytes) +
                                ") to stdout without ending the line";
        return broken(Outcome::Verdict::Retry, name() + " " + why, why);
      }
      case Event::Exited: {
        const std::string why = "exited during the job (" + describe_exit(reap()) + ")";
        return broken(Outcome::Verdict::Retry, name() + " " + why, why);
      }
      case Event::StdinRefused:
        // It closed its stdin, most likely by dying. Its exit (and so its
        // status and stderr) follows within moments; give it those.
        if (!gone_at) gone_at = Clock::now();
        gone_why = "stopped reading its stdin before job " + job.id + " was written";
        break;
      case Event::StdoutClosed:
        if (!gone_at) gone_at = Clock::now();
        gone_why = "closed its stdout during job " + job.id;
        break;
      case Event::WokeUp: return broken(Outcome::Verdict::Retry, name() + " " + gone_why, gone_why);
    }
  }
}

std::optional<PoolProcess::Turn> PoolProcess::answer_turn(ChildIoPump& pump, const Job& job) {
  buffer_ = std::move(pump.output());
  std::string line;
  std::string rest;
  // Progress lines first, each reported; then the answer, if it came.
  bool answered = false;
  while (!answered && take_line(line, rest)) {
    Reply progress;
    answered = !parse_reply_frame(line, progress).empty() || !progress.is_progress || progress.id != job.id;
    if (answered) break;
    if (job.progress) job.progress(progress.progress);
    buffer_ = std::move(rest);
  }
  if (!answered) {
    pump.keep_output(std::move(buffer_));
    return std::nullopt;
  }
  const std::size_t limit = pump.max_output();
  if (line.size() > limit) {
    const std::string why = "wrote a reply of " + std::to_string(line.size()) + " bytes, past max_output_bytes (" +
                            std::to_string(limit) + ")";
    return broken(Outcome::Verdict::Retry, name() + " " + why, why);
  }
  Turn turn = reply_turn(line, job, !rest.empty() || !pump.input_written());
  if (pump.exited() && turn.then == Turn::Then::Keep) {
    turn.then = Turn::Then::Broken;
    turn.why = "exited after its reply (" + describe_exit(reap()) + ")";
  }
  return turn;
}

PoolProcess::Idle PoolProcess::pump_idle() {
  drain_stderr();
  Idle idle;
  const PipeRead r = read_pipe(child_.stdout_pipe(), buffer_);
  if (child_.has_exited()) {
    idle.broken = true;
    idle.why = "exited while it had no job (" + describe_exit(reap()) + ")";
  } else if (r == PipeRead::Data) {
    idle.broken = true;
    idle.why = "wrote to stdout while it had no job: " + quote_text(buffer_);
  } else if (r == PipeRead::Eof) {
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
  while (read_pipe(child_.stdout_pipe(), buffer_) == PipeRead::Data) buffer_.clear();
  if (!child_.has_exited()) return false;
  const ExitStatus status = reap();
  spdlog::debug("queue={} pid={}: pool process ended: {}", queue_, child_.pid(), status.describe());
  return true;
}

}  // namespace echomq::daemon
