// The pool's watcher thread (pool_handler.h): starts the processes whose
// time has come, reads idle and ending ones (stderr lines, exits, idle
// timeouts) and kills those that overstay kill_grace_s.
#include <poll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "handlers/pool_handler.h"

namespace echomq::daemon {

void PoolHandler::start_due(std::unique_lock<std::mutex>& lock) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (closing_) return;
    if (slots_[i].state != Slot::State::Waiting || slots_[i].start_at > Clock::now()) continue;
    slots_[i].state = Slot::State::Spawning;
    lock.unlock();
    std::unique_ptr<PoolProcess> process;
    std::string error;
    try {
      process = std::make_unique<PoolProcess>(process_params_, params_.queue);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    // slots_ never changes size, so the slot is still slots_[i].
    Slot& slot = slots_[i];
    if (!process) {
      slot.state = Slot::State::Waiting;
      replace_later(slot, true, "could not be started: " + error);
      spdlog::error("queue={}: cannot start a pool process: {}; trying again in {} ms", params_.queue, error,
                    ms_until(slot.start_at));
      continue;
    }
    if (closing_) {
      end_process(std::move(process), How::CloseStdin);
      slot.state = Slot::State::Closed;
      continue;
    }
    slot.pid = process->pid();
    slot.process = std::move(process);
    slot.state = Slot::State::Idle;
    slot.up_since = Clock::now();
    if (slot.started_before) {
      const std::uint64_t n = ++restarts_;
      spdlog::info("queue={} pid={}: pool process started (restart {} of this pool)", params_.queue, slot.pid, n);
      if (params_.on_restart) params_.on_restart();
    }
    slot.started_before = true;
    changed_.notify_all();
  }
}

void PoolHandler::read_idle_and_ending(const std::vector<PoolProcess*>& readable, bool tick) {
  for (Slot& slot : slots_) {
    if (slot.state != Slot::State::Idle) continue;
    PoolProcess* p = slot.process.get();
    const auto deadline = p->idle_deadline();
    const bool due = deadline && Clock::now() >= *deadline;
    if (!tick && !due && std::find(readable.begin(), readable.end(), p) == readable.end()) continue;
    const PoolProcess::Idle idle = p->pump_idle();
    if (idle.broken) replace_process(slot, std::move(slot.process), idle.why, true);
  }
  const Clock::time_point now = Clock::now();
  for (auto it = ending_.begin(); it != ending_.end();) {
    if (it->process->pump_ending()) {
      it = ending_.erase(it);
      continue;
    }
    if (now >= it->kill_at) {
      spdlog::warn("queue={} pid={}: the pool process did not exit within kill_grace_s ({}s); killing it",
                   params_.queue, it->process->pid(), params_.handler.kill_grace_s);
      it->process->kill();
      it->kill_at = Clock::time_point::max();
    }
    ++it;
  }
}

void PoolHandler::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  std::vector<pollfd> fds;
  std::vector<PoolProcess*> owners;  // fds[i]'s process; null for the wake fd
  std::vector<PoolProcess*> readable;
  while (true) {
    start_due(lock);
    const bool busy = std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) {
      return s.state == Slot::State::Busy || s.state == Slot::State::Spawning;
    });
    if (closing_ && ending_.empty() && !busy) return;

    fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
    owners.assign(1, nullptr);
    bool tick = false;
    std::optional<Clock::time_point> next;
    const auto consider = [&](Clock::time_point t) {
      if (!next || t < *next) next = t;
    };
    const auto add = [&](PoolProcess* p) {
      for (int fd : {p->stdout_fd(), p->stderr_fd(), p->exit_fd()}) {
        if (fd < 0) continue;
        fds.push_back(pollfd{fd, POLLIN, 0});
        owners.push_back(p);
      }
      if (p->exit_fd() < 0) tick = true;
    };
    for (Slot& slot : slots_) {
      if (slot.state == Slot::State::Idle) {
        add(slot.process.get());
        if (auto deadline = slot.process->idle_deadline()) consider(*deadline);
      }
      if (slot.state == Slot::State::Waiting) consider(slot.start_at);
    }
    for (Ending& e : ending_) {
      add(e.process.get());
      if (e.kill_at != Clock::time_point::max()) consider(e.kill_at);
    }
    int timeout = next ? static_cast<int>(std::min<long long>(ms_until(*next), 60 * 60 * 1000)) : -1;
    if (tick && (timeout < 0 || timeout > kExitTick.count())) timeout = static_cast<int>(kExitTick.count());

    lock.unlock();
    const int n = ::poll(fds.data(), fds.size(), timeout);
    const int poll_errno = errno;
    std::uint64_t drained = 0;
    [[maybe_unused]] const ssize_t r = ::read(wake_.get(), &drained, sizeof drained);
    lock.lock();
    if (n < 0 && poll_errno != EINTR) {
      spdlog::error("queue={}: pool watcher: poll: {}", params_.queue, std::generic_category().message(poll_errno));
    }

    readable.clear();
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) readable.push_back(owners[i]);
    }
    // Entries may be stale (a slot thread took the process meanwhile):
    // Acts only on what is still idle or ending now.
    read_idle_and_ending(readable, tick);
  }
}

void PoolHandler::wake_watcher() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
}

}  // namespace echomq::daemon
