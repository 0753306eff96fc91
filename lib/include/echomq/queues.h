// The registry of queue names, {emq}:queues, beyond listing it (stats.h):
// taking a name off it once nothing is left in the queue.
#pragma once

#include <cstdint>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

struct ForgetResult {
  bool forgotten = false;  // the name was taken off {emq}:queues
  bool was_known = false;  // it was on it
  // What the queue still holds when it was not forgotten.
  std::int64_t pending = 0;
  std::int64_t active = 0;
  std::int64_t delayed = 0;
  std::int64_t dead = 0;
};

// Takes q off {emq}:queues only when its four sets are empty. Its counters
// and meta stay: they are history, and a queue that comes back goes on
// counting. A producer may register the name again at any time (enqueue
// does); the registry is kept outside transitions and is advisory.
ForgetResult forget_queue(Executor& x, const QueueKeys& q);

}  // namespace echomq
