// The claim loop's hold-back for the queue's limits (max_active, a rate;
// claim enforces them, this only spares the server the claims bound to
// come back short). A claim cut short holds the next claim back: until the
// rate's next token, or until a lease of the queue ends (or poll_max_ms)
// at max_active, or until the limits change. Not locked: the claim loop
// calls every member but changes() under its own mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

#include "echomq/executor.h"
#include "echomq/limits.h"
#include "metrics.h"

namespace echomq::daemon {

class LimitHoldback {
 public:
  using Clock = std::chrono::steady_clock;

  LimitHoldback(int poll_max_ms, QueueMetrics& qm) : poll_max_ms_(poll_max_ms), qm_(qm) {}

  // Taken before a claim goes out, and handed to after_claim(): a reading
  // of meta that a change of the limits overtook holds nothing back. Read
  // without the claim loop's mutex.
  std::uint64_t changes() const { return changes_.load(); }
  // From meta and the pending set read right after a claim that asked for
  // `asked` jobs and got `claimed`.
  // pending: none when its read failed.
  void after_claim(std::uint64_t changes_before, const LimitFields& fields, std::optional<std::int64_t> pending,
                   int asked, std::size_t claimed);
  // The next claim waits (until until()).
  bool holds_back(Clock::time_point now) const { return by_ != By::None && now < until_; }
  // The next claim waits for the rate's next token: no settlement of this
  // daemon's can make room before it.
  bool holds_for_token(Clock::time_point now) const { return holds_back(now) && by_ == By::Rate; }
  Clock::time_point until() const { return until_; }
  // A lease of the queue ended: a hold-back at max_active ends after a
  // short jitter. False when there was none to shorten.
  bool lease_ended();
  // The limits in meta changed: nothing holds the next claim back.
  void limits_changed();

 private:
  enum class By { None, MaxActive, Rate };

  const int poll_max_ms_;
  QueueMetrics& qm_;
  By by_ = By::None;
  Clock::time_point until_{};
  std::atomic<std::uint64_t> changes_{0};
  std::minstd_rand jitter_{std::random_device{}()};
};

}  // namespace echomq::daemon
