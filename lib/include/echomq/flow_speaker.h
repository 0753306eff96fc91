// Flows (PROTOCOL.md, "Flows"), for a flow-aware speaker: what it calls
// and reads around claim and settle (child_done, outbox_ack, a parent's
// children's results). The flows flag is claim_meta.h's; which settling
// transition a job takes is transitions.h's FlowMode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"

namespace echomq {

// A job named across queues, as flows name one: "<queue>:<id>"
// (QueueKeys::ref).
struct JobRef {
  std::string queue;
  std::string id;
};

// The ref read, or nullopt when it is not one (a queue name, a colon, an id
// past the wire's gate).
std::optional<JobRef> parse_ref(std::string_view ref);

// A child's outcome as its parent records it.
enum class ChildOutcome { Completed, Dead };
const char* to_string(ChildOutcome o);

// child_done's replies, in its numbers' order.
enum class ChildDoneResult {
  NotInDeps,         // 0: already told, or not a child of this parent
  Recorded,          // 1: others still awaited
  Released,          // 2: the last: the parent is pending
  ParentDied,        // 3: dead under fail: the parent is dead
  Waits,             // 4: dead under wait: the ref stays in deps
  ParentNotWaiting,  // 5: recorded, the ref left deps, nothing else
};
const char* to_string(ChildDoneResult r);

// child_done on the parent's queue, with its outbox (a parent that is
// itself a child and dies here reaches its own parent).
ScriptCall child_done_call(const QueueKeys& parent_queue, std::string_view parent_id, std::string_view child_ref,
                           ChildOutcome outcome, std::string_view text);
ChildDoneResult decode_child_done(const Reply& r);

// outbox_ack on the child's queue: true when the id left the outbox.
// With `read_score`, the score the id had when the caller read it: a child
// that finished again since (retried from dead) keeps its entry, and its
// parent hears of the new outcome in the next round.
ScriptCall outbox_ack_call(const QueueKeys& q, std::string_view id, std::int64_t keep_ms,
                           std::optional<std::int64_t> read_score = std::nullopt);
bool decode_outbox_ack(const Reply& r);

// One child's outcome, from a parent's results.
struct ChildResult {
  std::string queue;
  std::string id;
  ChildOutcome outcome = ChildOutcome::Completed;
  std::string text;  // the result, or the error
};

// A parent's children's results (HGETALL emq:{q}:results:<id>): empty for
// a job that is no parent. In ref order, so every reader sees one order.
Command results_read(const QueueKeys& q, std::string_view id);
std::vector<ChildResult> decode_results(const Reply& r);

}  // namespace echomq
