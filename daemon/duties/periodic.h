// The shape every periodic duty shares (lease renewal, the reaper, the queue
// sampler, the progress sender): one thread that runs tick() at once and
// then whenever the interval tick() returns has passed, or sooner when
// woken, and stops promptly when asked.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace echomq::daemon {

class Periodic {
 public:
  explicit Periodic(std::string name) : name_(std::move(name)) {}
  virtual ~Periodic();
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  void start();
  void request_stop();
  void join();
  // Runs tick() now rather than when its wait is over.
  void wake();

 protected:
  // One round of the duty; returns how long to wait before the next. A
  // failure is logged as "<name>: <what>" (a server outage once, when it
  // starts) and retried after a second; a duty never ends the process.
  virtual std::chrono::milliseconds tick() = 0;

 private:
  void main();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  int failures_ = 0;  // main() only: rounds failed in a row
  std::thread thread_;
};

}  // namespace echomq::daemon
