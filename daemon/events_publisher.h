// The `events:` of each queue's config, written to its meta at start as
// the limits are, so that every speaker of the queue passes its stream
// (PROTOCOL.md, "Events"). `off` deletes the field; the stream itself is
// kept until someone deletes it.
#pragma once

#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"

namespace echomq::daemon {

// One round trip to read, one to write what differs (logged with the old
// and the new length). The executor's events book learns the lengths.
void publish_config_events(Executor& x, const std::vector<QueueConfig>& queues);

}  // namespace echomq::daemon
