// The typed API (L4): one function per transition of emq/1. Each builds its
// KEYS from the keyspace, runs the script through the executor, and decodes
// the reply into an outcome. Expected outcomes (a duplicate, a lost lease)
// are return values; only failures throw echomq::Error.
//
// For batching, the settling transitions also come as a *_call builder and a
// decode_* function: the daemon pipelines many calls with eval_batch and
// decodes each reply with the same code the single call uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

inline constexpr int kMinLane = -1000;
inline constexpr int kMaxLane = 1000;

// Replaced: a unique enqueue in replace mode gave its payload (and due
// time) to the pending or delayed job holding its key.
enum class EnqueueResult { Enqueued, Duplicate, Replaced };
enum class CompleteResult { Completed, LeaseLost };
enum class FailResult { LeaseLost, Retry, Dead };
enum class ReleaseResult { Released, LeaseLost };
// Refused: cancel's 2 (running, a waiting parent in Plain mode, or a
// finished child whose parent has not been told; job_actions.h,
// cancel_refusal, says which).
enum class CancelResult { Removed, NotFound, Refused };
// KeyHeld: another live job holds the dead job's unique key; it stays dead.
enum class RetryJobResult { Moved, NotDead, KeyHeld };
enum class PromoteJobResult { Moved, NotDelayed };
// enqueue_cron's replies: 1, 0, 2; KeyHeld and Replaced when the job's
// unique key is held (the tick taken, nothing enqueued; in replace mode the
// holder's payload replaced).
enum class CronFireResult { Enqueued, Already, Skipped, KeyHeld, Replaced };

// The job holding a unique key, as a duplicate's reply names it: its id,
// and its state (the row's, or "gone" for a window whose row is gone).
struct KeyHolder {
  std::string id;
  std::string state;
};

// The modes of a unique key (docs/protocol.md, "Unique jobs").
enum class UniqueMode { Finished, Started, Window, Replace };
const char* unique_mode_name(UniqueMode m);
std::optional<UniqueMode> unique_mode_from(std::string_view name);

// A job's unique key, its mode and its window (ms, window mode only; a
// window given without a mode is window mode).
struct UniqueKey {
  std::string key;
  std::optional<UniqueMode> mode;
  std::int64_t for_ms = 0;
};

// The named options the flow and schedule forms take too: a unique key and
// a trace context (traceparent 55 bytes, tracestate at most 512).
struct JobOptions {
  std::optional<UniqueKey> unique;
  std::string traceparent;
  std::string tracestate;
};

struct CronFire {
  std::string_view name;     // the schedule
  std::int64_t fire_ms = 0;  // the tick
  std::int64_t lane = 0;
  bool skip_overlap = false;  // overlap: skip
  JobOptions job{};           // the job's unique key and trace context
  std::string group{};        // the job's group; empty for none
};

struct EnqueueOptions {
  int lane = 0;
  // When set, the job waits in the delayed set until this epoch millisecond
  // of the server's clock.
  std::optional<std::int64_t> due_ms;
  // A unique key and a trace context: the optioned enqueue
  // (docs/protocol.md, "The optioned enqueue").
  JobOptions job{};
  // The job's group (docs/protocol.md, "Groups"): empty for none; else
  // 1-128 bytes of [0-9A-Za-z_.:-], checked host-side first.
  std::string group{};
};

// The named pairs a JobOptions adds to an enqueue form's ARGV, and the lock
// KEY it then takes; checked host-side first (Error{Invalid} naming what).
void add_job_options(const QueueKeys& q, const JobOptions& o, std::vector<std::string>& keys,
                     std::vector<std::string>& args);

// The group option of enqueue, enqueue_child and enqueue_cron
// (docs/protocol.md, "The enqueues"): the pair, and the group's six KEYS
// after the lock; nothing for "". Throws Error{Invalid} for a malformed
// group.
void add_group_option(const QueueKeys& q, std::string_view group, std::vector<std::string>& keys,
                      std::vector<std::string>& args);

// A leased job as claim hands it out.
struct ClaimedJob {
  std::string id;
  std::string payload;
  std::int64_t attempt = 0;
  std::int64_t lease_epoch = 0;
};

// What fences a settling call: the id and the epoch it was claimed with.
struct Lease {
  std::string id;
  std::int64_t epoch = 0;
};

struct ClaimArgs {
  std::int64_t lease_ms = 30000;
  std::int64_t max_count = 1;
  std::int64_t promote_limit = 100;
};

struct FailArgs {
  std::string_view error;
  std::int64_t max_attempts = 5;
  std::int64_t backoff_ms = 0;
  bool permanent = false;
};

// How a queue's jobs settle. Plain: complete and fail (the native module
// runs them). Flow: complete_flow and fail_flow, which tell a child's
// parent through the queue's outbox; taken once the queue's meta says
// flows = 1 (read with each claim: claim_meta.h). This and the
// functions below are the one place that picks the transition. reap
// always passes the outbox (a script on either executor; a row without
// parent is reaped as it would be without it). cancel passes it in Flow
// mode, its default, with the waiting set and the id's deps and results: a
// child then goes to dead with error `cancelled` and its parent hears of
// it, and a waiting parent is removed (or, a child, sent to dead); Plain
// deletes any row but a waiting parent's, which is what deleting a dead
// job (already told) wants.
enum class FlowMode { Plain, Flow };

struct ReapResult {
  std::int64_t requeued = 0;
  std::int64_t dead = 0;
};

// enqueue, enqueue_lane or enqueue_at, as the options ask: lane 0 and no
// due time is the seed's enqueue; a unique key or a trace context makes it
// the optioned enqueue. Throws Error{Invalid} for a bad id, lane or option.
ScriptCall enqueue_call(const QueueKeys& q, std::string_view id, std::string_view payload,
                        const EnqueueOptions& options = {});
// Any enqueue form's reply (enqueue, enqueue_child, enqueue_parent): given
// holder, a unique duplicate or replace fills it with the job holding the
// key (a row that exists is its own holder).
EnqueueResult decode_enqueue(const Reply& r, KeyHolder* holder = nullptr);
EnqueueResult enqueue(Executor& x, const QueueKeys& q, std::string_view id, std::string_view payload,
                      const EnqueueOptions& options = {});

// One fire of a schedule, at most once per tick (PROTOCOL.md "Schedules").
ScriptCall enqueue_cron_call(const QueueKeys& q, std::string_view id, std::string_view payload, const CronFire& fire);
CronFireResult decode_enqueue_cron(const Reply& r, KeyHolder* holder = nullptr);
CronFireResult enqueue_cron(Executor& x, const QueueKeys& q, std::string_view id, std::string_view payload,
                            const CronFire& fire);

ScriptCall claim_call(const QueueKeys& q, const ClaimArgs& args);
std::vector<ClaimedJob> decode_claim(Reply r);
std::vector<ClaimedJob> claim(Executor& x, const QueueKeys& q, const ClaimArgs& args);

// One result per lease, in order: true extended, false lost.
ScriptCall extend_call(const QueueKeys& q, std::int64_t lease_ms, const std::vector<Lease>& leases);
std::vector<bool> decode_extend(const Reply& r, std::size_t leases);
std::vector<bool> extend(Executor& x, const QueueKeys& q, std::int64_t lease_ms, const std::vector<Lease>& leases);

// A running job's progress, as its handler reported it (at most
// kMaxProgressBytes), fenced as extend is: true stored (and, given the
// stream, appended to it), false lease lost.
inline constexpr std::size_t kMaxProgressBytes = 1024;
ScriptCall progress_call(const QueueKeys& q, const Lease& lease, std::string_view value);
bool decode_progress(const Reply& r);
bool progress(Executor& x, const QueueKeys& q, const Lease& lease, std::string_view value);

// In Flow mode a child's row is kept with its result whatever keep_ms
// (outbox_ack applies keep_ms once its parent is told): pass the result
// even when the queue keeps no completed rows.
ScriptCall complete_call(const QueueKeys& q, const Lease& lease, std::int64_t keep_ms, std::string_view result,
                         FlowMode mode = FlowMode::Plain);
CompleteResult decode_complete(const Reply& r);
CompleteResult complete(Executor& x, const QueueKeys& q, const Lease& lease, std::int64_t keep_ms,
                        std::string_view result);

ScriptCall fail_call(const QueueKeys& q, const Lease& lease, const FailArgs& args, FlowMode mode = FlowMode::Plain);
FailResult decode_fail(const Reply& r);
FailResult fail(Executor& x, const QueueKeys& q, const Lease& lease, const FailArgs& args);

ScriptCall release_call(const QueueKeys& q, const Lease& lease);
ReleaseResult decode_release(const Reply& r);
ReleaseResult release(Executor& x, const QueueKeys& q, const Lease& lease);

ReapResult reap(Executor& x, const QueueKeys& q, std::int64_t max_attempts, std::int64_t limit);
// skipped: dead jobs left dead because another live job holds their unique key.
struct RetryDeadResult {
  std::int64_t moved = 0;
  std::int64_t skipped = 0;
};
ScriptCall retry_dead_call(const QueueKeys& q, std::int64_t limit);
RetryDeadResult retry_dead(Executor& x, const QueueKeys& q, std::int64_t limit);

// retry_job and cancel act on ids an operator names or a listing read back
// from the server: their builders check no more than the wire's gate (the
// script's EMQKIND), so an odd id a peer wrote can still be acted on.
ScriptCall retry_job_call(const QueueKeys& q, std::string_view id);
RetryJobResult decode_retry_job(const Reply& r, KeyHolder* holder = nullptr);
RetryJobResult retry_job(Executor& x, const QueueKeys& q, std::string_view id);
// An operator's "run it now": one delayed job to pending at its lane.
ScriptCall promote_job_call(const QueueKeys& q, std::string_view id);
PromoteJobResult decode_promote_job(const Reply& r);
PromoteJobResult promote_job(Executor& x, const QueueKeys& q, std::string_view id);

ScriptCall cancel_call(const QueueKeys& q, std::string_view id, FlowMode mode = FlowMode::Flow);
CancelResult decode_cancel(const Reply& r);
CancelResult cancel(Executor& x, const QueueKeys& q, std::string_view id, FlowMode mode = FlowMode::Flow);
std::int64_t trim_dead(Executor& x, const QueueKeys& q, std::int64_t older_than_ms, std::int64_t max_keep);

// group_set (docs/protocol.md, "Groups"): writes group's policy text ("" is
// the default again), or the default's when group is "*", and brings the
// group back to the rotation when the change lets it run. True when the
// group is then in the rotation (or waits for its rate's next token).
// Throws Error{Invalid} for a bad group name; the script refuses a bad
// policy (Error{Arg}, its text naming the field).
ScriptCall group_set_call(const QueueKeys& q, std::string_view group, std::string_view policy);
bool group_set(Executor& x, const QueueKeys& q, std::string_view group, std::string_view policy);

}  // namespace echomq
