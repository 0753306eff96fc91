// The `limits:` of each queue's config, written to its meta at start, so
// that claim enforces them for every daemon of the queue. A queue without
// `limits:` leaves meta as it is (emq limit may have set them).
#pragma once

#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"

namespace echomq::daemon {

// One round trip to read, one to write what differs. Meta that held other
// limits gets a warning naming the old and the new; a rate that changes
// resets the bucket (a full bucket at the new rate).
void write_config_limits(Executor& x, const std::vector<QueueConfig>& queues);

}  // namespace echomq::daemon
