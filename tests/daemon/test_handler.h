// A handler that lives in the test binary, so a test can hold jobs at a
// gate, count how many run at once, and choose each outcome by payload.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "handlers/handler.h"

namespace echomq::daemon {

class GateHandler : public Handler {
 public:
  // Payloads "retry" and "dead" fail that way; "wait-stop" runs until its
  // stop token fires; anything else completes with the payload as result,
  // once the gate is open.
  Outcome run(const Job& job, const StopToken& stop) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++running_;
    max_running_ = std::max(max_running_, running_);
    started_.push_back(job.id);
    changed_.notify_all();
    const bool stoppable = job.payload == "wait-stop";
    changed_.wait(lock, [&] { return open_ || (!stoppable && passes_ > 0) || (stoppable && stop.requested()); });
    if (!open_ && !stoppable) --passes_;
    --running_;
    ++finished_;
    changed_.notify_all();
    if (job.payload == "wait-stop") return Outcome::failed(Outcome::Verdict::Retry, "stopped");
    if (job.payload == "retry") return Outcome::failed(Outcome::Verdict::Retry, "try again");
    if (job.payload == "dead") return Outcome::failed(Outcome::Verdict::Dead, "bad input");
    return Outcome::complete("done:" + job.payload);
  }

  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    changed_.notify_all();
  }
  // Lets one job through the shut gate.
  void let_one() {
    std::lock_guard<std::mutex> lock(mu_);
    ++passes_;
    changed_.notify_all();
  }
  // A stop token's request does not signal this cv: wake waiters to look.
  void poke() { changed_.notify_all(); }
  int running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
  }
  int max_running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_running_;
  }
  int finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }
  std::vector<std::string> started() const {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;
  int passes_ = 0;
  int running_ = 0;
  int max_running_ = 0;
  int finished_ = 0;
  std::vector<std::string> started_;
};

}  // namespace echomq::daemon
