// Acting on jobs an operator picked: retry, run now or delete by id, or
// empty a whole set. What `emq dead retry|delete`, `emq promote`, `emq
// purge` and the buttons of `emq web` do. Everything goes through the
// wire's transitions (retry_job, promote_job, cancel), pipelined, so a row
// always goes with its id and a running job is never taken from its worker.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/jobs.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"

namespace echomq {

// One call per id, in one round trip per kActionBatch ids; one result per
// id, in order. Ids are taken as given past the wire's gate (an id that is
// not JOB-namespaced throws Error{Kind}): check ids a person typed first.
// KeyHeld: another live job holds the dead job's unique key (it stays
// dead); given holders, each such id's holder is at its index.
std::vector<RetryJobResult> retry_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                                       std::vector<KeyHolder>* holders = nullptr);
std::vector<PromoteJobResult> promote_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids);
// cancel_jobs in Flow mode moves a child to dead and tells its parent
// (transitions.h, FlowMode); Plain deletes every row.
std::vector<CancelResult> cancel_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                                      FlowMode mode = FlowMode::Flow);

// Why cancel refused `id`, from its row's state, as an operator reads it:
// "<id> is running (active) and was not cancelled; ..." with what to do.
std::string cancel_refusal(Executor& x, const QueueKeys& q, std::string_view id);

// Deletes, through cancel, those of ids that are in the dead set now;
// true for each id deleted. An id that is not dead is left alone. A dead
// child's parent was told when it died: its row is deleted like any other.
std::vector<bool> delete_dead_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids);

// Moves every job dead now back to pending (retry_dead), oldest death
// first, kRetrySlice at a time (one script call blocks the server while it
// runs), or at most limit when one is given (> 0). Jobs that die while it
// runs are not chased: it stops once it has moved as many as were dead at
// the start. Returns how many moved, and how many stayed dead because
// another live job holds their unique key. `emq dead retry` and `emq web`'s
// "retry all".
inline constexpr std::int64_t kRetrySlice = 1000;
inline constexpr std::int64_t kMaxRetryDeadLimit = 1000000;  // retry_dead's own bound
RetryDeadResult retry_all_dead(Executor& x, const QueueKeys& q, std::int64_t limit = 0);

// Ids per pipelined round trip: large enough to amortise the trip, small
// enough that the server serves other clients between batches.
inline constexpr std::size_t kActionBatch = 1000;

struct PurgeResult {
  std::int64_t removed = 0;
  // Ids that stay in the set because their row says active (a peer left
  // it so): cancel refuses them. Jobs claimed while the purge ran are in
  // neither count: they left the set for a worker.
  std::int64_t refused_active = 0;
};

// Cancels the jobs of a pending, delayed or dead set, from its head, batch
// by batch: at most as many as the set held when the purge began, so a
// producer that keeps adding cannot keep it going. progress, if given, is
// called after each batch with the count so far. A pending or delayed
// child goes to dead and its parent is told (cancel's Flow mode); the dead
// set's rows are deleted. Throws Error{Invalid} for
// JobState::Active: running jobs belong to their workers.
PurgeResult purge(Executor& x, const QueueKeys& q, JobState state,
                  const std::function<void(const PurgeResult&)>& progress = {});

}  // namespace echomq
