// CLOCK_MONOTONIC in nanoseconds: the clock the latency programs read on
// both sides of what they measure (process.hrtime reads it in the peer).
#pragma once

#include <time.h>

inline long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
