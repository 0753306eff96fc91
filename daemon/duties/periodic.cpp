#include "duties/periodic.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "echomq/errors.h"

namespace echomq::daemon {

Periodic::~Periodic() {
  // Derived classes must stop the thread in their own destructor, while
  // tick() still exists; this only catches a forgotten join.
  request_stop();
  join();
}

void Periodic::start() {
  thread_ = std::thread([this] { main(); });
}

void Periodic::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
}

void Periodic::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Periodic::join() {
  if (thread_.joinable()) thread_.join();
}

void Periodic::main() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    std::chrono::milliseconds wait;
    try {
      wait = tick();
      if (failures_ > 0) spdlog::info("{}: works again, after {} failed rounds", name_, failures_);
      failures_ = 0;
    } catch (const Error& e) {
      // A server that is away fails every round alike, with the text of an
      // attempt that may be seconds old: said once, when it starts, and
      // counted when it ends. The claim loops log each reconnect attempt.
      if (!e.transient() || failures_ == 0) spdlog::warn("{}: {}", name_, e.what());
      ++failures_;
      wait = std::chrono::seconds(1);
    } catch (const std::exception& e) {
      spdlog::warn("{}: {}", name_, e.what());
      ++failures_;
      wait = std::chrono::seconds(1);
    }
    lock.lock();
    cv_.wait_for(lock, wait, [&] { return stopping_ || woken_; });
    woken_ = false;
  }
}

}  // namespace echomq::daemon
