#include "handlers/exec_handler.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "handlers/pool_protocol.h"
#include "process/child_io_pump.h"
#include "process/child_process.h"
#include "process/fd.h"
#include "process/sigpipe_block.h"
#include "process/stderr_lines.h"

namespace echomq::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// Why the daemon ended the job before the handler did; the first wins.
enum class Ending { None, TimedOut, Stopped, OutputExceeded };

// One job's process, from the payload's first byte to the reaped exit. The
// pump moves the bytes and watches the clock; this is exec's policy: how
// each event ends the job, and what the exit status means.
class JobRun {
 public:
  JobRun(const HandlerConfig& config, const Job& job, const StopToken& stop, ChildProcess& child)
      : config_(config),
        job_(job),
        child_(child),
        stderr_(job.queue, job.id),
        progress_(job.progress),
        pump_(child, stderr_, stop.fd(), rules(config, job, &progress_)) {}

  Outcome run() {
    const Clock::time_point started = Clock::now();
    while (!handle(pump_.run())) {
    }
    // Whatever the job left behind in its group goes with it.
    child_.terminate_group(SIGKILL);
    const ExitStatus status = child_.wait();
    stderr_.finish();
    spdlog::debug("queue={} job={}: {} after {} ms", job_.queue, job_.id, status.describe(),
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count());
    return outcome(status);
  }

 private:
  static ChildIoPump::Rules rules(const HandlerConfig& config, const Job& job, ProgressLines* progress) {
    ChildIoPump::Rules r;
    r.input = job.payload;
    r.progress = progress;
    r.max_output = static_cast<std::size_t>(std::max<std::int64_t>(config.max_output_bytes, 0));
    if (config.timeout_s > 0) r.timeout_at = Clock::now() + seconds(config.timeout_s);
    return r;
  }

  // True once the job is over (the child has exited).
  bool handle(ChildIoPump::Event event) {
    using Event = ChildIoPump::Event;
    switch (event) {
      case Event::Exited:
        if (pump_.pipes_held_open()) {
          spdlog::warn(
              "queue={} job={}: the handler exited, but processes it started still held its stdout or "
              "stderr open after {} ms; killing its process group",
              job_.queue, job_.id, ChildIoPump::kPipeGrace.count());
        }
        return true;
      case Event::TimedOut: begin_ending(Ending::TimedOut); break;
      case Event::Stopped: begin_ending(Ending::Stopped); break;
      case Event::OutputExceeded:
        if (ending_ == Ending::None) ending_ = Ending::OutputExceeded;
        pump_.kill_group();
        break;
      case Event::StdinRefused:
        // Not a failure by itself: its exit status says how the job went.
        spdlog::debug("queue={} job={}: handler stopped reading stdin before all {} bytes were in", job_.queue, job_.id,
                      job_.payload.size());
        break;
      case Event::Answered:
      case Event::StdoutClosed:
      case Event::WokeUp: break;
    }
    return false;
  }

  // SIGTERM to the group now, SIGKILL after kill_grace_s.
  void begin_ending(Ending why) {
    if (ending_ != Ending::None) return;
    ending_ = why;
    pump_.end_group(seconds(config_.kill_grace_s));
  }

  Outcome outcome(const ExitStatus& status) {
    Outcome::Verdict verdict = Outcome::Verdict::Retry;
    std::string reason;
    switch (ending_) {
      case Ending::Stopped: reason = kStoppedByDaemon; break;
      case Ending::TimedOut: reason = fmt::format("timed out after {}s", config_.timeout_s); break;
      case Ending::OutputExceeded:
        reason = fmt::format("output exceeded max_output_bytes ({})", config_.max_output_bytes);
        break;
      case Ending::None:
        if (status.success()) return Outcome::complete(std::move(pump_.output()));
        if (is_permanent(status)) verdict = Outcome::Verdict::Dead;
        reason = status.describe();
        break;
    }
    const std::string tail = stderr_.tail();
    return Outcome::failed(verdict, tail.empty() ? reason : reason + ": " + tail);
  }

  bool is_permanent(const ExitStatus& status) const {
    const auto& codes = config_.permanent_exit_codes;
    return status.kind == ExitStatus::Kind::Exited && std::find(codes.begin(), codes.end(), status.code) != codes.end();
  }

  const HandlerConfig& config_;
  const Job& job_;
  ChildProcess& child_;
  StderrLines stderr_;
  ProgressLines progress_;  // before pump_, which is given it
  ChildIoPump pump_;
  Ending ending_ = Ending::None;
};

// EMQ_PROGRESS_FD=3: each line the job writes there is a progress report
// (docs/handlers.md). env is kept sorted by name.
void add_progress_fd(std::vector<std::string>& env) {
  const std::string entry = "EMQ_PROGRESS_FD=3";
  env.erase(
      std::remove_if(env.begin(), env.end(), [](const std::string& e) { return e.rfind("EMQ_PROGRESS_FD=", 0) == 0; }),
      env.end());
  env.insert(std::upper_bound(env.begin(), env.end(), entry), entry);
}

// A parent's children's results for its process: a file with no name,
// handed to the child as its descriptor 4 and named by EMQ_CHILDREN_FILE
// as /dev/fd/4. Nothing of it is ever on disk under a name, so nothing
// outlives the job, however the daemon ends (a SIGKILL mid-job left a
// named file in $TMPDIR for ever); its last reader's exit frees it.
class ChildrenFile {
 public:
  // 3 is EMQ_PROGRESS_FD's.
  static constexpr int kChildFd = 4;

  explicit ChildrenFile(const std::vector<ChildResult>& children) : fd_(open_unnamed()) {
    const std::string text = children_json(children);
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(std::string("cannot write the children file: ") + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    // A handler reading descriptor 4 itself starts at the first byte.
    if (::lseek(fd_.get(), 0, SEEK_SET) != 0) {
      throw std::runtime_error(std::string("cannot rewind the children file: ") + std::strerror(errno));
    }
  }

  int fd() const { return fd_.get(); }

  // env with EMQ_CHILDREN_FILE=/dev/fd/4, kept sorted by name.
  static void add_to(std::vector<std::string>& env) {
    const std::string name = "EMQ_CHILDREN_FILE=";
    env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name, 0) == 0; }),
              env.end());
    const std::string entry = name + "/dev/fd/" + std::to_string(kChildFd);
    env.insert(std::upper_bound(env.begin(), env.end(), entry), entry);
  }

 private:
  // In $TMPDIR (or /tmp), mode 0600, close-on-exec (so that a handler
  // spawned meanwhile by another job does not inherit it): O_TMPFILE, or
  // where the file system has none, a named file unlinked at once.
  static int open_unnamed() {
    const char* env_dir = std::getenv("TMPDIR");
    const std::string dir = env_dir != nullptr && *env_dir != '\0' ? env_dir : "/tmp";
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
      std::string path = dir + "/emq-children-XXXXXX";
      fd = ::mkostemp(path.data(), O_CLOEXEC);
      if (fd >= 0) ::unlink(path.c_str());
    }
    if (fd < 0) throw std::runtime_error("cannot create the children file in " + dir + ": " + std::strerror(errno));
    return fd;
  }

  Fd fd_;
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
  if (stop.requested()) return Outcome::stopped();
  const SigpipeBlock sigpipe_block;
  try {
    std::vector<std::string> env = env_.for_job(job);
    std::optional<ChildrenFile> children;
    if (!job.children.empty()) {
      children.emplace(job.children);
      ChildrenFile::add_to(env);
    }
    add_progress_fd(env);
    ChildProcess child(
        {params_.handler.command, std::move(env), params_.handler.cwd, true, children ? children->fd() : -1});
    return JobRun(params_.handler, job, stop, child).run();
  } catch (const SpawnError& e) {
    spdlog::warn("queue={} job={}: {}", job.queue, job.id, e.what());
    return Outcome::failed(Outcome::Verdict::Retry, e.what());
  } catch (const std::exception& e) {
    // Out of descriptors or memory: the child, if any, was killed and
    // reaped on the way out.
    spdlog::warn("queue={} job={}: exec handler failed: {}", job.queue, job.id, e.what());
    return Outcome::failed(Outcome::Verdict::Retry, std::string("exec handler failed: ") + e.what());
  }
}

std::unique_ptr<Handler> make_exec_handler(const QueueConfig& queue, std::vector<std::string> secret_env_names) {
  return std::make_unique<ExecHandler>(ExecHandler::Params{queue.name, queue.handler, std::move(secret_env_names)});
}

}  // namespace echomq::daemon
