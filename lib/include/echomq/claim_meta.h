// What a claimer reads from emq:{q}:meta right behind each claim, in the
// claim's round trip and in one HMGET: the limit fields, which say why a
// claim came back short (limits.h), the flows flag, which says how the
// queue's jobs settle (transitions.h, FlowMode), and events, the length of
// the queue's stream that its next transitions pass (events.h).
//
// The flag can be read after the claim without missing a child: a child
// is claimable only once enqueue_child has set it. Flow once set; the flag
// is never cleared.
#pragma once

#include "echomq/keyspace.h"
#include "echomq/limits.h"
#include "echomq/transitions.h"

namespace echomq {

struct ClaimMeta {
  LimitFields limits;
  FlowMode flows = FlowMode::Plain;
  std::int64_t events = 0;  // 0: the queue keeps no events
};

// HMGET meta max_active rate_max rate_window_ms rate_credit rate_at flows events.
Command claim_meta_read(const QueueKeys& q);
// An error reply (meta of the wrong type) reads as no limits and Plain:
// the claim beside it has already said what is wrong.
ClaimMeta decode_claim_meta(const Reply& r);

}  // namespace echomq
