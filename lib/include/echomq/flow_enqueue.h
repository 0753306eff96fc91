// Flows (PROTOCOL.md, "Flows"), for a producer: a tree of jobs, checked
// whole and enqueued parents first.
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
  JobOptions job{};  // its unique key and trace context
  // Its group (docs/protocol.md, "Groups"), "" for none: a leaf waits in
  // its group's turn; a parent carries it in its row, and its release by
  // its last child sends it to its group.
  std::string group{};
};

// A node as enqueued: its id, and whether it was new.
struct FlowJob {
  std::string queue;
  std::string id;
  EnqueueResult result = EnqueueResult::Enqueued;
  KeyHolder holder;  // a unique duplicate's (or replace's): the job holding its key
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
// and id) given twice anywhere in the tree, a malformed group, a tree deeper than
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
// tree again with its ids fills in what a failed call left out. A node
// whose unique key another job holds is not enqueued, nor its subtree: its
// parent then waits for it, as for a refusal (below); a root so held
// enqueues nothing and is no error. Throws
// Error as check_flow does (a payload is checked against the server's own
// proto-max-bulk-len when over 1 MiB), before anything is sent. A call the
// server still refuses skips its node's subtree; the rest is enqueued, then
// the Error names the parents left waiting for a child that is not there
// and how to cancel them (so does a connection lost half-way, naming those
// that may be).
FlowJob enqueue_flow(Executor& x, const FlowNode& root);

}  // namespace echomq
