#include "handlers/pool_handler.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "process/sigpipe_block.h"

namespace echomq::daemon {
namespace {

using Clock = PoolHandler::Clock;

// How often a run() waiting for a free process looks at its stop token
// (a condition variable cannot wait on the token's eventfd).
constexpr std::chrono::milliseconds kWaitTick{20};
// After a failure, a new process gets a job (and counts as up) only once it
// has lived this long: one of a crash loop (a bad deploy) dies sooner, and
// a job handed to it would burn an attempt at the loop's pace.
constexpr std::chrono::milliseconds kProvenAfter{1000};

// The environment of a pool's processes: the scrubbed one, plus the queue.
// No job variables: a process outlives its jobs, and each frame says which
// job it carries.
std::vector<std::string> pool_env(const HandlerEnv& env, const std::string& queue) {
  std::map<std::string, std::string> vars = env.base();
  vars["EMQ_QUEUE"] = queue;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

}  // namespace

long long PoolHandler::ms_until(Clock::time_point t) {
  return std::max<long long>(0, std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count());
}

PoolHandler::PoolHandler(Params params)
    : params_(std::move(params)), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), rng_(std::random_device{}()) {
  if (!wake_) throw std::system_error(errno, std::generic_category(), "eventfd");
  const HandlerEnv env(params_.handler, params_.secret_env_names, ::environ);
  process_params_ = {params_.handler.command, pool_env(env, params_.queue), params_.handler.cwd};
  slots_.resize(static_cast<std::size_t>(std::max(params_.concurrency, 1)));
}

PoolHandler::~PoolHandler() { shutdown(); }

void PoolHandler::start() {
  const std::string where = "queue " + params_.queue + ": pool handler: ";
  try {
    ChildProcess::check_runnable(process_params_);
  } catch (const SpawnError& e) {
    throw std::runtime_error(where + e.what());
  }
  std::string pids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Slot& slot : slots_) {
      try {
        slot.process = std::make_unique<PoolProcess>(process_params_, params_.queue);
      } catch (const std::exception& e) {
        // The ones already started are killed and reaped with their slots.
        for (Slot& started : slots_) started = Slot{};
        throw std::runtime_error(where + e.what());
      }
      slot.state = Slot::State::Idle;
      slot.pid = slot.process->pid();
      slot.up_since = Clock::now();
      slot.started_before = true;
      pids += (pids.empty() ? "" : ", ") + std::to_string(slot.pid);
    }
  }
  watcher_ = std::thread([this] { watch(); });
  spdlog::info("queue={}: pool of {} processes started (pids {})", params_.queue, slots_.size(), pids);
}

Outcome PoolHandler::run(const Job& job, const StopToken& stop) {
  if (stop.requested()) return Outcome::stopped();
  std::optional<Clock::time_point> timeout_at;
  if (params_.handler.timeout_s > 0) timeout_at = Clock::now() + seconds(params_.handler.timeout_s);

  std::size_t index = 0;
  Outcome failed;
  std::unique_ptr<PoolProcess> process = take_process(index, stop, timeout_at, failed);
  if (!process) return failed;

  const SigpipeBlock sigpipe_block;
  PoolProcess::Turn turn;
  try {
    turn = process->run_job(job, params_.handler, stop, timeout_at);
  } catch (const std::exception& e) {
    // Out of memory or descriptors: the process's state is unknown.
    turn.outcome = Outcome::failed(Outcome::Verdict::Retry, std::string("pool handler failed: ") + e.what());
    turn.then = PoolProcess::Turn::Then::Broken;
    turn.why = turn.outcome.error;
  }
  give_back(index, std::move(process), turn);
  return std::move(turn.outcome);
}

std::unique_ptr<PoolProcess> PoolHandler::take_process(std::size_t& index, const StopToken& stop,
                                                       std::optional<Clock::time_point> timeout_at, Outcome& failed) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const Clock::time_point seen = Clock::now();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (!usable(slots_[i], seen) || slots_[i].process->stdout_closed()) continue;
      index = i;
      slots_[i].state = Slot::State::Busy;
      return std::move(slots_[i].process);
    }
    if (closing_) {
      failed = Outcome::failed(Outcome::Verdict::Retry, "the pool is shutting down");
      return nullptr;
    }
    // Every free slot waiting out a backoff delay: the handler keeps
    // failing. The job goes back to pending now, uncounted (it never ran),
    // rather than holding a slot; the claim loop claims no more meanwhile
    // (not_ready()), and another daemon may take it.
    const Slot* next = nullptr;
    bool all_backing_off = true;
    const Clock::time_point now = Clock::now();
    for (const Slot& slot : slots_) {
      if (slot.state == Slot::State::Busy) continue;
      if (slot.state != Slot::State::Waiting || slot.start_at <= now) {
        all_backing_off = false;
        break;
      }
      if (next == nullptr || slot.start_at < next->start_at) next = &slot;
    }
    if (all_backing_off && next != nullptr) {
      failed = Outcome::failed(Outcome::Verdict::Release,
                               "the pool's processes keep failing (last: " + next->last_failure +
                                   "); the next starts in " + std::to_string(ms_until(next->start_at)) + " ms");
      return nullptr;
    }
    if (stop.requested()) {
      failed = Outcome::stopped();
      return nullptr;
    }
    if (timeout_at && now >= *timeout_at) {
      failed = Outcome::failed(Outcome::Verdict::Retry, fmt::format("timed out after {}s (no pool process was free)",
                                                                    params_.handler.timeout_s));
      return nullptr;
    }
    changed_.wait_for(lock, kWaitTick);
  }
}

void PoolHandler::give_back(std::size_t index, std::unique_ptr<PoolProcess> process, const PoolProcess::Turn& turn) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[index];
  if (turn.answered) slot.failures = 0;
  const pid_t pid = process->pid();
  const std::int64_t max_jobs = params_.handler.max_jobs_per_process;
  switch (turn.then) {
    case PoolProcess::Turn::Then::Keep:
      if (closing_) {
        end_process(std::move(process), How::CloseStdin);
        replace_later(slot, false, "");
      } else if (max_jobs > 0 && process->jobs() >= max_jobs) {
        spdlog::info("queue={} pid={}: recycling the pool process after {} jobs (max_jobs_per_process)", params_.queue,
                     pid, process->jobs());
        end_process(std::move(process), How::CloseStdin);
        replace_later(slot, false, "");
      } else {
        slot.process = std::move(process);
        slot.state = Slot::State::Idle;
      }
      break;
    case PoolProcess::Turn::Then::Replace: replace_process(slot, std::move(process), turn.why, false); break;
    case PoolProcess::Turn::Then::Broken: replace_process(slot, std::move(process), turn.why, true); break;
  }
  // The watcher polls idle processes and starts replacements: it must
  // see the change.
  wake_watcher();
  changed_.notify_all();
}

void PoolHandler::end_process(std::unique_ptr<PoolProcess> process, How how) {
  if (how == How::CloseStdin) {
    process->close_stdin();
  } else {
    process->terminate();
  }
  Clock::time_point kill_at = Clock::now() + seconds(params_.handler.kill_grace_s);
  if (params_.handler.kill_grace_s <= 0) {
    process->kill();
    kill_at = Clock::time_point::max();
  }
  ending_.push_back(Ending{std::move(process), kill_at});
  wake_watcher();
}

void PoolHandler::replace_process(Slot& slot, std::unique_ptr<PoolProcess> process, const std::string& why,
                                  bool failed) {
  const pid_t pid = process->pid();
  end_process(std::move(process), How::Terminate);
  replace_later(slot, failed, "pool process " + std::to_string(pid) + " " + why);
  if (why.empty()) return;
  spdlog::warn("queue={} pid={}: the pool process {}; replacing it{}", params_.queue, pid, why,
               slot.state == Slot::State::Waiting && slot.start_at > Clock::now()
                   ? " in " + std::to_string(ms_until(slot.start_at)) + " ms"
                   : "");
}

void PoolHandler::replace_later(Slot& slot, bool failed, const std::string& why) {
  slot.process.reset();
  slot.pid = 0;
  if (closing_) {
    slot.state = Slot::State::Closed;
    return;
  }
  if (failed) {
    ++slot.failures;
    slot.last_failure = why;
  }
  // The first replacement after a failure is immediate: one crash is not
  // a pattern. From the second in a row on, each waits longer.
  std::int64_t delay_ms = 0;
  if (slot.failures >= 2) delay_ms = backoff_delay_ms(params_.restart_backoff, slot.failures - 1, rng_);
  slot.state = Slot::State::Waiting;
  slot.start_at = Clock::now() + std::chrono::milliseconds(delay_ms);
}

void PoolHandler::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!watcher_.joinable()) return;
    closing_ = true;
    for (Slot& slot : slots_) {
      if (slot.state == Slot::State::Idle) {
        end_process(std::move(slot.process), How::CloseStdin);
        slot.pid = 0;
        slot.state = Slot::State::Closed;
      } else if (slot.state == Slot::State::Waiting) {
        slot.state = Slot::State::Closed;
      }
      // Busy: its run() hands the process back to be ended; Spawning:
      // start_due() ends the new one.
    }
    wake_watcher();
    changed_.notify_all();
  }
  watcher_.join();
  spdlog::info("queue={}: pool stopped ({} restarts)", params_.queue, restarts_.load());
}

bool PoolHandler::usable(const Slot& slot, Clock::time_point now) {
  return slot.state == Slot::State::Idle && (slot.failures == 0 || now - slot.up_since >= kProvenAfter);
}

std::string PoolHandler::not_ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return {};
  const Clock::time_point now = Clock::now();
  const Slot* failing = nullptr;
  for (const Slot& slot : slots_) {
    if (slot.state == Slot::State::Busy || usable(slot, now)) return {};
    if (failing == nullptr || slot.failures > failing->failures) failing = &slot;
  }
  // One failure is not a pattern: its replacement starts at once. From the
  // second in a row on, the slot waits out a backoff.
  if (failing == nullptr || failing->failures < 2) return {};
  return "no pool process is up: " + failing->last_failure + " (" + std::to_string(failing->failures) +
         " failures in a row)";
}

std::vector<pid_t> PoolHandler::pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<pid_t> out;
  for (const Slot& slot : slots_) {
    if (slot.state == Slot::State::Idle || slot.state == Slot::State::Busy) out.push_back(slot.pid);
  }
  return out;
}

std::unique_ptr<Handler> make_pool_handler(const QueueConfig& queue, std::vector<std::string> secret_env_names,
                                           std::function<void()> on_restart) {
  PoolHandler::Params params;
  params.queue = queue.name;
  params.handler = queue.handler;
  params.concurrency = queue.concurrency;
  params.secret_env_names = std::move(secret_env_names);
  params.on_restart = std::move(on_restart);
  return std::make_unique<PoolHandler>(std::move(params));
}

}  // namespace echomq::daemon
