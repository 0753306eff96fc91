// Flows (PROTOCOL.md, "Flows"), for a tool: a tree as it stands (`emq flow
// show`) and the parents no child can release any more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/flow_speaker.h"
#include "echomq/keyspace.h"

namespace echomq {

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

// The orphans of the given waiting parents of q, in their order. Up to
// four round trips: their deps; each child's state; for a finished child,
// its outbox entry and the parent's record of it; for the suspects,
// whether the ref is still in deps (a child told and acknowledged between
// the reads is no orphan).
// The daemon's orphan watch and `emq web` both ask this.
std::vector<FlowOrphan> find_orphans(Executor& x, const QueueKeys& q, const std::vector<std::string>& parents);

// Reads a job and, down to max_depth levels, its children: one round trip
// per level, each job once (memory linear in the jobs read). The children
// of the last level, and a job met again, are listed with their cut. A
// completed parent has no deps or results left, so only its own row shows.
FlowView read_flow(Executor& x, const QueueKeys& q, std::string_view id, int max_depth = 16);

}  // namespace echomq
