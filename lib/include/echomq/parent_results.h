// What a claimer reads for the parents it claimed (PROTOCOL.md, "Flows"):
// their children's results, read only where a parent can be. A queue whose
// meta has no `parents` holds none, and sends nothing; in one that has,
// only the claimed jobs whose row has `children` are parents.
#pragma once

#include <vector>

#include "echomq/executor.h"
#include "echomq/flow_speaker.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"

namespace echomq {

// One list per claimed job, in its order: a parent's children's results
// (decode_results' order), empty for a job that is no parent. Two round
// trips: which rows have `children`, then those parents' results (none when
// no job is a parent). Throws Error as the executor does; then no job may
// run, since a parent must not run without its children's results.
std::vector<std::vector<ChildResult>> read_parent_results(Executor& x, const QueueKeys& q,
                                                          const std::vector<ClaimedJob>& jobs);

}  // namespace echomq
