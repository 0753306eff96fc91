// Acting on every job a search found (search.h): `emq dead retry
// --match`, `emq cancel --match` and the page's "Retry all N" / "Cancel
// all N". The jobs go through the same transitions as one picked by hand
// (retry_job, cancel), kBulkBatch per round trip, so the server serves
// other clients between batches; a job that left the searched state
// between the search and the action is left alone and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/jobs.h"
#include "echomq/keyspace.h"

namespace echomq {

// Transitions per pipelined batch. A hundred retry_job calls held the
// server 1.1-2.4 ms in all on a loaded 2-core machine (docs/web.md),
// where a thousand would hold the daemons' claims back ten times longer.
inline constexpr std::size_t kBulkBatch = 100;

struct BulkResult {
  std::int64_t done = 0;     // retried, or cancelled
  std::int64_t changed = 0;  // not in the searched state any more: left alone
  std::int64_t held = 0;     // retry: left dead, another live job holds its unique key
};

// Moves those of ids that are dead now back to pending (retry_job).
BulkResult retry_found(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids);

// Cancels those of ids that are still in state's set now: a pending or
// delayed job (a flow's child goes to dead and its parent is told, as
// `emq cancel` does). One that moved on (claimed, retried, delayed again)
// is left alone, checked in the round trip before its batch's cancel.
// Throws Error{Invalid} for another state: running jobs belong to their
// workers, dead ones have `emq dead delete`, waiting parents their own
// `emq cancel QUEUE ID`.
BulkResult cancel_found(Executor& x, const QueueKeys& q, JobState state, const std::vector<std::string>& ids);

}  // namespace echomq
