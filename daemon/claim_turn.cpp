#include "claim_turn.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {
constexpr std::int64_t kPromoteLimit = 100;
// The replies behind the claim, by place after it: as the constructor
// lays the reads out.
enum Behind : std::size_t { kMeta = 1, kPending = 2, kSoonestParked = 3, kTime = 4 };
// The largest gwait score read: a time in epoch ms, as every script writes.
constexpr std::int64_t kMaxParkedMs = 9000000000000000;

// gwait's soonest member [group, time] against TIME: the ms until it comes
// back, 0 when due; none when gwait is empty or either reply is not that.
std::optional<std::int64_t> parked_in_ms(const Reply& soonest, const Reply& time) {
  if (soonest.type != Reply::Type::Array || soonest.elements.size() != 2) return std::nullopt;
  const std::optional<std::int64_t> at = whole_number_in(soonest.elements[1].str, 0, kMaxParkedMs);
  if (!at) return std::nullopt;
  try {
    return std::max<std::int64_t>(0, *at - time_reply_ms(time));
  } catch (const Error&) {
    return std::nullopt;
  }
}
}  // namespace

ClaimTurn::ClaimTurn(const QueueConfig& queue, const QueueKeys& keys, Settler& settler, FlowMode mode,
                     std::deque<Settlement>& batch, int claim, bool ask_parked) {
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
    ask_parked_ = ask_parked;
    if (ask_parked) {
      reads_.push_back({"ZRANGE", keys.gwait, "0", "0", "WITHSCORES"});
      reads_.push_back({"TIME"});
    }
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
  const Reply& meta = replies[settles_ + kMeta];
  const Reply& pending = replies[settles_ + kPending];
  r.claimed = true;
  r.meta = decode_claim_meta(meta);
  if (pending.type == Reply::Type::Integer) r.pending = pending.integer;
  if (ask_parked_) {
    r.parked_group_in_ms = parked_in_ms(replies[settles_ + kSoonestParked], replies[settles_ + kTime]);
  }
  try {
    r.jobs = decode_claim(std::move(claim));
  } catch (const Error& e) {
    r.refused = e;
  }
  return r;
}

}  // namespace echomq::daemon
