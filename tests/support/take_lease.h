// Another worker's reaper takes a running job's lease: its deadline moved
// to the past and the reap, in one MULTI. Apart, a renewal of the daemon's
// (every lease/3) could land between the two and leave nothing to reap; it
// did, under load, in two tests before this helper.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/scripts.h"

namespace echomq::test {

// How many jobs the reap requeued: 1 when it took the lease of `id`.
inline std::int64_t take_lease(Executor& x, const QueueKeys& q, const std::string& id) {
  std::vector<Reply> r = x.pipeline({{"MULTI"},
                                     {"ZADD", q.active, "1", id},
                                     {"EVAL", script_source(Script::Reap), "6", q.active, q.pending, q.dead, q.stats,
                                      q.row_root, q.outbox, "5", "10"},
                                     {"EXEC"}});
  EXPECT_EQ(r.size(), 4u);
  if (r.size() != 4 || r[3].type != Reply::Type::Array) {
    ADD_FAILURE() << "MULTI of ZADD and reap did not EXEC: " << (r.empty() ? "" : r.back().str);
    return -1;
  }
  return r[3].elements.at(1).elements.at(0).integer;
}

}  // namespace echomq::test
