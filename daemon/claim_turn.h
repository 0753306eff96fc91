// One turn of a claim loop on the wire (claim_loop.h): the outcomes to
// settle and, when the slots have room, a claim with the two reads that
// ride right behind it in the same round trip: meta (why a claim came back
// short, the flows flag, the stream's length: claim_meta.h) and the size of
// the pending set (limit_holdback.h); for an idle loop, also when the first
// group parked in gwait (at its cap or out of tokens) comes back, so that
// the loop claims then rather than at its next poll. Built from a batch, sent on one
// channel's executor, and read back as named results, so that no caller
// finds a reply by its place. The loop keeps the pacing and the dispatch.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "config/config_types.h"
#include "echomq/claim_meta.h"
#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "settle.h"

namespace echomq::daemon {

class ClaimTurn {
 public:
  struct Results {
    std::vector<Reply> settled;  // one per settlement of the batch, in its order
    bool claimed = false;        // a claim went out, and the fields below are its
    std::vector<ClaimedJob> jobs;
    std::optional<Error> refused;  // the claim's error (none: jobs holds what it leased)
    ClaimMeta meta;
    std::optional<std::int64_t> pending;  // none: the read failed
    // Milliseconds until the soonest parked group comes back (0: due now);
    // none: no group waits, or it was not asked.
    std::optional<std::int64_t> parked_group_in_ms;
  };

  // Each settlement of `batch` as its transition; one that no script would
  // take (an id a peer wrote past the wire's gate) is logged and taken out
  // of the batch into dropped(): its lease expires and the reaper decides.
  // claim: jobs to ask for, 0 for none. ask_parked: read gwait's soonest
  // member and the server's time behind the claim too.
  ClaimTurn(const QueueConfig& queue, const QueueKeys& keys, Settler& settler, FlowMode mode,
            std::deque<Settlement>& batch, int claim, bool ask_parked = false);

  const std::vector<Lease>& dropped() const { return dropped_; }
  // The round trip. Throws what the executor throws (the server's trouble);
  // a refused settlement or claim comes back in the results.
  Results run(Executor& x) const;

 private:
  std::vector<ScriptCall> calls_;
  std::vector<Command> reads_;  // behind the claim
  bool ask_parked_ = false;     // gwait's soonest and TIME end reads_
  std::vector<Lease> dropped_;
  std::size_t settles_ = 0;
};

}  // namespace echomq::daemon
