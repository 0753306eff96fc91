// The claim loop's pacing through server trouble. Trouble backs off as a
// lost server does: the executor's reconnect wait, or (for a server that
// answers but refuses writes) a wait that doubles on the same reconnect
// policy's bounds. The log gets one line per attempt at a lost server
// (each with that attempt's error). Trouble that can last for hours while
// the server answers (a refusal such as READONLY, or a cluster with a
// shard down) gets one line when it starts, one per change of a refusal,
// and none per attempt. A last line gives the count when it is over.
// Not locked: the claim loop calls it under its mutex.
#pragma once

#include <chrono>
#include <string>

#include "echomq/executor.h"

namespace echomq::daemon {

class ServerTrouble {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ServerTrouble(const std::string& queue) : queue_(queue) {}

  // While trouble is under way, the connection that met it last makes the
  // attempts alone.
  bool under_way() const { return count_ > 0; }
  bool met_last_by(const Executor& x) const { return troubled_ == &x; }
  // Waiting out the trouble, unless another connection of the daemon has
  // reached the server since: then the wait is over at once.
  bool backing_off(Clock::time_point now) const {
    return now < backoff_until_ && !(troubled_ != nullptr && troubled_->server_back());
  }
  Clock::time_point backoff_until() const { return backoff_until_; }
  // An attempt on `x` failed with `e`; `unsent` outcomes wait for the next.
  void met(const Executor& x, const Error& e, Clock::time_point now, std::size_t unsent);
  // A round trip on `x` went through: true when it ended trouble (logged).
  bool over(const Executor& x);

 private:
  const std::string& queue_;
  int count_ = 0;
  Clock::time_point since_{};
  std::chrono::milliseconds delay_{0};
  std::string text_;
  const Executor* troubled_ = nullptr;
  Clock::time_point backoff_until_{};
  // A connection of this queue has held a cluster's map. Kept, because the
  // connection that meets a shard down may be one that never held it (its
  // first connect failed at the lost node), and it is the same cluster.
  bool on_cluster_ = false;
};

}  // namespace echomq::daemon
