#include "echomq/backoff.h"

#include <algorithm>
#include <cmath>

namespace echomq {

std::int64_t backoff_delay_ms(const BackoffPolicy& p, std::int64_t attempt, std::mt19937_64& rng) {
  const double exponent = static_cast<double>(std::max<std::int64_t>(attempt, 1) - 1);
  double delay = static_cast<double>(p.initial_ms) * std::pow(std::max(p.multiplier, 1.0), exponent);
  delay = std::min(delay, static_cast<double>(p.max_ms));  // also tames inf
  const double jitter = std::clamp(p.jitter, 0.0, 1.0);
  if (jitter > 0.0 && delay > 0.0) {
    std::uniform_real_distribution<double> cut(0.0, jitter);
    delay -= delay * cut(rng);
  }
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::llround(delay)));
}

}  // namespace echomq
