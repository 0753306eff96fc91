// Flows (PROTOCOL.md, "Flows"): a parent job runs after its children, which
// may live in any queue. What a producer enqueues (enqueue_flow), what a
// flow-aware speaker reads and calls around claim and settle (the flows
// flag, child_done, outbox_ack, a parent's children's results), and what
// a tool shows (read_flow). Which settling transition a job takes is
// transitions.h's FlowMode.
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

// A job of a tree to enqueue. A node with children is a parent: it waits
// until each has finished, then runs with their results.
struct FlowNode {
  std::string queue;
  std::string payload;
  int lane = 0;
  // A parent's: what a child's death does to it: fail, wait or ignore.
  std::string on_child_failure = "fail";
  std::string id;  // "" mints one
  std::vector<FlowNode> children;
};

// A node as enqueued: its id, and whether it was new.
struct FlowJob {
  std::string queue;
  std::string id;
  EnqueueResult result = EnqueueResult::Enqueued;
  std::vector<FlowJob> children;
};

// The deepest tree enqueue_flow takes, in levels (the root is level 1).
inline constexpr int kMaxFlowDepth = 64;

// The path a node is named by in errors, from the child indexes down to
// it: root, root.children[2], root.children[2].children[0], ...
std::string flow_node_path(const std::vector<std::size_t>& at);
// Throws Error{Invalid} naming the node at `at` when it lies below
// kMaxFlowDepth levels: for a reader of a tree, before it reads deeper.
void check_flow_depth(const std::vector<std::size_t>& at);

// Throws Error{Invalid} naming the node (by its path: root, root.children[2],
// ...) and what to fix: a bad queue name, lane, policy or id, a job (queue
// and id) given twice anywhere in the tree, a tree deeper than
// kMaxFlowDepth, a payload over the server's default argument limit (512
// MiB). Nothing is written when it throws. Memory and stack are linear in
// the tree's size, whatever its shape.
void check_flow(const FlowNode& root);

// Enqueues the tree: each level after the one above it, so a parent
// always exists before its children (a child finished before its parent
// existed would tell no one). One round trip per level, split per node on
// a cluster. A parent is enqueue_parent, a leaf that has a parent
// enqueue_child, a root without children a plain enqueue. A node found
// already there (Duplicate) does not stop its children: enqueueing the same
// tree again with its ids fills in what a failed call left out. Throws
// Error as check_flow does (a payload is checked against the server's own
// proto-max-bulk-len when over 1 MiB), before anything is sent. A call the
// server still refuses skips its node's subtree; the rest is enqueued, then
// the Error names the parents left waiting for a child that is not there
// and how to cancel them (so does a connection lost half-way, naming those
// that may be).
FlowJob enqueue_flow(Executor& x, const FlowNode& root);

// "<queue>:<id>" split, or nullopt when it is not a ref (a queue name, a
// colon, an id past the wire's gate).
std::optional<std::pair<std::string, std::string>> parse_ref(std::string_view ref);

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

// Why read_flow did not read a job it lists: past max_depth, or met
// before in this tree (deps that name each other, a job under two
// parents), where it is read and shown once.
enum class FlowCut { None, Depth, Repeat };

// A job of a flow as it stands, for `emq flow show`.
struct FlowView {
  std::string queue;
  std::string id;
  FlowCut cut = FlowCut::None;  // not None: nothing below but queue and id was read
  bool found = false;           // the row exists
  std::string state;
  std::optional<std::string> result;
  std::optional<std::string> error;
  std::string parent;  // its parent's ref, "" for none
  std::string on_child_failure;
  std::int64_t children_enqueued = 0;  // the row's `children`
  // A parent's children: those it waits for (deps), then those recorded in
  // its results, each once, in ref order; with the outcome recorded, if any.
  std::vector<FlowView> children;
  std::vector<std::optional<ChildResult>> recorded;  // one per child, same order
  std::vector<bool> awaited;                         // one per child, same order
};

// A parent waiting on a child that can no longer tell it: the child's row
// is gone, or it completed or died without its outbox entry (a speaker that
// knows nothing of flows settled it). Nothing would ever release such a
// parent (docs/operations.md, "Flow orphans").
struct FlowOrphan {
  std::string parent;  // its id, in the queue looked at
  std::string child;   // the child's ref
  std::string reason;  // "its row is gone", ...
};

// The orphans of the given waiting parents of q, in their order. Three
// round trips: their deps; each child's state, outbox entry and the
// parent's record of it; for the suspects, whether the ref is still in
// deps (a child told and acknowledged between the reads is no orphan).
// The daemon's orphan watch and `emq web` both ask this.
std::vector<FlowOrphan> find_orphans(Executor& x, const QueueKeys& q, const std::vector<std::string>& parents);

// Reads a job and, down to max_depth levels, its children: one round trip
// per level, each job once (memory linear in the jobs read). The children
// of the last level, and a job met again, are listed with their cut. A
// completed parent has no deps or results left, so only its own row shows.
FlowView read_flow(Executor& x, const QueueKeys& q, std::string_view id, int max_depth = 16);

}  // namespace echomq
