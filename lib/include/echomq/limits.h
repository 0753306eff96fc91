// A queue's limits (PROTOCOL.md, "Limits"): max_active and a rate, in
// emq:{q}:meta, which claim enforces for every speaker. Here they are read
// and written with plain commands, by the daemon (config at start, and the
// read behind each claim that says why a claim came back short) and by
// `emq limit`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "echomq/connection.h"
#include "echomq/keyspace.h"

namespace echomq {

// The ranges claim takes (PROTOCOL.md, "Limits"); the config and `emq
// limit` refuse anything outside them before it reaches meta.
constexpr std::int64_t kMaxActiveLimit = 1000000;  // max_active and rate_max
constexpr std::int64_t kMaxWindowMs = 86400000;    // rate_window_ms: 24 h

struct RateLimit {
  std::int64_t max = 0;        // claims per window, 1..1,000,000
  std::int64_t window_ms = 0;  // 1..86,400,000
  bool operator==(const RateLimit& o) const { return max == o.max && window_ms == o.window_ms; }
  bool operator!=(const RateLimit& o) const { return !(*this == o); }
};

struct QueueLimits {
  std::optional<std::int64_t> max_active;  // 1..1,000,000
  std::optional<RateLimit> rate;
  bool operator==(const QueueLimits& o) const { return max_active == o.max_active && rate == o.rate; }
  bool operator!=(const QueueLimits& o) const { return !(*this == o); }
};

// meta's limit fields as read (nullopt: absent), the bucket included.
struct LimitFields {
  std::optional<std::string> max_active, rate_max, rate_window_ms, rate_credit, rate_at;

  // The limits they hold; nullopt when one is broken, with why (claim's
  // words: "max_active must be an integer in 1..1000000") in *broken.
  std::optional<QueueLimits> limits(std::string* broken = nullptr) const;
  // The bucket's whole tokens and the time to the next one, after the
  // claim that wrote it (rate_credit read right after it): 0 ms when a
  // token is there; nullopt without a well-formed rate and bucket.
  std::optional<std::int64_t> ms_to_next_token() const;
  // The bucket's credit (tokens x rate_window_ms) at server time now_ms, as
  // claim computes it before it pops: nullopt without a well-formed rate.
  std::optional<std::int64_t> credit_at(std::int64_t now_ms) const;
};

// What a queue's limits do to it now, for a person (emq limit, emq web):
// read from meta's fields, the active set's size and the server's time.
struct LimitStatus {
  std::optional<QueueLimits> limits;   // nullopt: broken
  std::string broken;                  // claim's words, when broken
  std::optional<std::int64_t> tokens;  // whole tokens now, with a rate
  std::int64_t ms_to_token = 0;        // with a rate and no token: the wait
  // Why a claim made now would take nothing, "" when it would not be held:
  // "max_active 5 reached (5 active)", "rate: no token left (next in 12 ms)",
  // or "broken limit: <why>".
  std::string held_back;
};
LimitStatus limit_status(const LimitFields& f, std::int64_t active, std::int64_t now_ms);

// HMGET meta max_active rate_max rate_window_ms rate_credit rate_at.
Command limit_fields_read(const QueueKeys& q);
LimitFields decode_limit_fields(const Reply& r);

// The commands that make meta hold `want`: HSET what is set, HDEL what is
// off. A rate that differs from `was` also deletes the bucket (a full
// bucket at the new rate).
std::vector<Command> limits_write(const QueueKeys& q, const QueueLimits& was, const QueueLimits& want);

// "max_active 20, rate 100/1000ms", or "none".
std::string describe(const QueueLimits& l);

}  // namespace echomq
