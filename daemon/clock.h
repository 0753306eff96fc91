// Wall-clock milliseconds, for what the daemon tells handlers and metrics
// (deadlines, wait times). Leases never use it: their times come from the
// server's TIME inside the scripts.
#pragma once

#include <chrono>
#include <cstdint>

namespace echomq::daemon {

inline std::int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace echomq::daemon
