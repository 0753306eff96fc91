// Exponential backoff with jitter: the one formula behind retry delays,
// reconnect waits, pool restarts and idle polling.
#pragma once

#include <cstdint>
#include <random>

namespace echomq {

struct BackoffPolicy {
  std::int64_t initial_ms = 1000;
  double multiplier = 2.0;
  std::int64_t max_ms = 3600000;
  double jitter = 0.2;  // 0..1: the delay is drawn from [d*(1-jitter), d]
};

// The delay before try number `attempt` (1 = the first retry):
// initial * multiplier^(attempt-1), capped at max, minus up to jitter of it.
// Taking jitter off (never adding it) keeps the cap a real cap.
std::int64_t backoff_delay_ms(const BackoffPolicy& policy, std::int64_t attempt, std::mt19937_64& rng);

}  // namespace echomq
