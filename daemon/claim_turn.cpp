#include "claim_turn.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace echomq::daemon {

namespace {
constexpr std::int64_t kPromoteLimit = 100;
}  // namespace

ClaimTurn::ClaimTurn(const QueueConfig& queue, const QueueKeys& keys, Settler& settler, FlowMode mode,
                     std::deque<Settlement>& batch, int claim) {
  calls_.reserve(batch.size() + 1);
  for (auto it = batch.begin(); it != batch.end();) {
    try {
      calls_.push_back(settler.call(*it, mode));
      ++it;
    } catch (const Error& e) {
      spdlog::error("queue={} job={} cannot be settled: {}", queue.name, it->lease.id, e.what());
      dropped_.push_back(it->lease);
      it = batch.erase(it);
    }
  }
  settles_ = calls_.size();
  if (claim > 0) {
    calls_.push_back(claim_call(keys, {queue.lease_ms, claim, kPromoteLimit}));
    reads_ = {claim_meta_read(keys), {"ZCARD", keys.pending}};
  }
}

ClaimTurn::Results ClaimTurn::run(Executor& x) const {
  std::vector<Reply> replies = reads_.empty() ? x.eval_batch(calls_) : x.eval_batch(calls_, reads_);
  Results r;
  r.settled.assign(std::make_move_iterator(replies.begin()),
                   std::make_move_iterator(replies.begin() + static_cast<std::ptrdiff_t>(settles_)));
  if (reads_.empty()) return r;
  // The claim, then the reads behind it.
  Reply& claim = replies[settles_];
  const Reply& meta = replies[settles_ + 1];
  const Reply& pending = replies[settles_ + 2];
  r.claimed = true;
  r.meta = decode_claim_meta(meta);
  if (pending.type == Reply::Type::Integer) r.pending = pending.integer;
  try {
    r.jobs = decode_claim(std::move(claim));
  } catch (const Error& e) {
    r.refused = e;
  }
  return r;
}

}  // namespace echomq::daemon
