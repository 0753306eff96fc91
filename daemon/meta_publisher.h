// What each queue's config says that every speaker of the queue reads from
// its meta, written at start: the policy (max_attempts, lease_ms,
// keep_completed_ms, published for tools and operators), the `limits:`
// (claim enforces them for every daemon of the queue; a queue without
// `limits:` leaves meta as it is, since emq limit may have set them) and
// the `events:` length (every transition of the queue then passes its
// stream, PROTOCOL.md "Events"; `off` deletes the field, and the stream is
// kept until someone deletes it). A queue's `groups:` is written to
// emq:{q}:groups through group_set: exactly its policies, the others
// deleted; a queue without `groups:` leaves the hash as it is.
#pragma once

#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"

namespace echomq::daemon {

// A round trip to read the limits and the events held, and one to write
// what differs, logged with the old and the new. Meta that held other
// limits gets a warning; a rate that changes resets the bucket (a full
// bucket at the new rate). The executor's events book learns the lengths.
// Throws server trouble; a meta another writer broke is warned of.
void publish_queue_meta(Executor& x, const std::vector<QueueConfig>& queues);

}  // namespace echomq::daemon
