// Who holds a unique key, as a tool asks it (emq jobs --unique, emq
// inspect, the job page): the lock and the holder's row, judged by the
// rule the enqueue scripts apply (docs/protocol.md, "Who holds a key").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

struct UniqueLock {
  std::string key;
  std::string points_at;             // the id the lock holds; "" when there is no lock
  std::int64_t window_left_ms = -1;  // a window lock's time to live; -1 for a pointer
  bool held = false;                 // a live job holds the key: the next enqueue of it is a duplicate
  std::string holder_state;          // the row's state ("gone" when the row is gone or not a hash)
  std::string holder_mode;           // the row's unique_mode ("" when absent)
};

// Two round trips: the lock, then the row it points at. Throws
// Error{Invalid} for a key that is not 1-128 bytes of [0-9A-Za-z_.:-].
UniqueLock read_unique_lock(Executor& x, const QueueKeys& q, std::string_view key);

// "held by JOB_x (pending)", "free: the lock points at JOB_x, which is
// completed (a stale pointer the next enqueue takes over)", "free".
std::string describe(const UniqueLock& lock);

}  // namespace echomq
