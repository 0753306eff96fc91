#include "limit_holdback.h"

#include <algorithm>

namespace echomq::daemon {

namespace {
using std::chrono::milliseconds;

// A lease that ends is heard by every daemon of the queue at once: each
// claims after its own wait of up to this long, so that they do not all
// ask the server for the one free place in the same instant.
constexpr int kLeaseEndJitterMs = 20;
}  // namespace

// A rate without a whole token waits for the next one, whatever else
// happens: nothing could be claimed before it. A claim cut short while
// jobs wait, at max_active, waits for a lease to end (lease_ended) or
// poll_max_ms; a settlement of this daemon's may claim meanwhile.
void LimitHoldback::after_claim(std::uint64_t changes_before, const LimitFields& fields,
                                std::optional<std::int64_t> pending, int asked, std::size_t claimed) {
  if (changes_before != changes_) return;
  by_ = By::None;
  const std::optional<QueueLimits> limits = fields.limits();
  const std::optional<std::int64_t> token_in = fields.ms_to_next_token();
  const bool cut_short = static_cast<int>(claimed) < asked && pending && *pending > 0;
  const Clock::time_point now = Clock::now();
  if (token_in && *token_in > 0) {
    by_ = By::Rate;
    until_ = now + milliseconds(*token_in);
    if (cut_short) qm_.limited_rate->Increment();
  } else if (cut_short && limits && limits->max_active) {
    by_ = By::MaxActive;
    until_ = now + milliseconds(poll_max_ms_);
    qm_.limited_max_active->Increment();
  }
}

bool LimitHoldback::lease_ended() {
  if (by_ != By::MaxActive) return false;
  const auto at = Clock::now() + milliseconds(std::uniform_int_distribution<int>(0, kLeaseEndJitterMs)(jitter_));
  until_ = std::min(until_, at);
  return true;
}

void LimitHoldback::limits_changed() {
  ++changes_;
  by_ = By::None;
}

}  // namespace echomq::daemon
