// What a claimer reads from emq:{q}:meta right behind each claim, in the
// claim's round trip and in one HMGET: the limit fields, which say why a
// claim came back short (limits.h), the flows and parents flags, which say
// how the queue's jobs settle (transitions.h, FlowMode) and whether a
// claimed job may need its children's results, and events, the length of
// the queue's stream that its next transitions pass (events.h).
//
// The flags can be read after the claim without missing a job: a child is
// claimable only once enqueue_child has set flows, a parent only once
// enqueue_parent has set parents. Flow once set; neither is ever cleared.
#pragma once

#include "echomq/keyspace.h"
#include "echomq/limits.h"
#include "echomq/transitions.h"

namespace echomq {

struct ClaimMeta {
  LimitFields limits;
  // Flow when meta has flows or parents: a parent settles with the flow
  // transitions too, which delete its deps and results.
  FlowMode flows = FlowMode::Plain;
  // Meta has parents: the claimed jobs whose row has children are parents,
  // to be given their children's results. Without it no job of the queue is.
  bool parents = false;
  std::int64_t events = 0;  // 0: the queue keeps no events
};

// HMGET meta max_active rate_max rate_window_ms rate_credit rate_at flows
// parents events.
Command claim_meta_read(const QueueKeys& q);
// An error reply (meta of the wrong type) reads as no limits and Plain:
// the claim beside it has already said what is wrong.
ClaimMeta decode_claim_meta(const Reply& r);

}  // namespace echomq
