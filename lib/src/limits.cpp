#include "echomq/limits.h"

#include <algorithm>

#include "echomq/whole_number.h"

namespace echomq {

namespace {

std::optional<std::int64_t> in_range(const std::optional<std::string>& s, std::int64_t lo, std::int64_t hi) {
  return s ? server_integer_in(*s, lo, hi) : std::nullopt;
}

// The bucket's fields, in claim's ranges: credit in tokens x window ms,
// at in server ms.
std::optional<std::int64_t> bucket_credit(const std::optional<std::string>& s) {
  return in_range(s, 0, 86400000000000);
}
std::optional<std::int64_t> bucket_at(const std::optional<std::string>& s) { return in_range(s, 0, 1000000000000000); }

// Milliseconds until a bucket holding `credit` has a whole token.
std::int64_t ms_to_token(const RateLimit& r, std::int64_t credit) {
  const std::int64_t missing = r.window_ms - credit;
  return missing <= 0 ? 0 : (missing + r.max - 1) / r.max;
}

std::optional<std::string> field(const Reply& r, std::size_t i) {
  if (r.type != Reply::Type::Array || i >= r.elements.size() || r.elements[i].type != Reply::Type::String) {
    return std::nullopt;
  }
  return r.elements[i].str;
}

}  // namespace

std::optional<QueueLimits> LimitFields::limits(std::string* broken) const {
  auto refuse = [&](const std::string& why) -> std::optional<QueueLimits> {
    if (broken != nullptr) *broken = why;
    return std::nullopt;
  };
  QueueLimits l;
  if (max_active) {
    l.max_active = in_range(max_active, 1, kMaxActiveLimit);
    if (!l.max_active) return refuse("max_active must be an integer in 1..1000000");
  }
  const auto m = in_range(rate_max, 1, kMaxActiveLimit), w = in_range(rate_window_ms, 1, kMaxWindowMs);
  if (rate_max && !m) return refuse("rate_max must be an integer in 1..1000000");
  if (rate_window_ms && !w) return refuse("rate_window_ms must be an integer in 1..86400000");
  if (m && !w) return refuse("rate_window_ms must be set with rate_max");
  if (w && !m) return refuse("rate_max must be set with rate_window_ms");
  if (!m) return l;
  l.rate = RateLimit{*m, *w};
  if (rate_credit && !bucket_credit(rate_credit)) {
    return refuse("rate_credit must be an integer in 0..86400000000000 (delete it for a full bucket)");
  }
  if (rate_at && !bucket_at(rate_at)) {
    return refuse("rate_at must be an integer in 0..1000000000000000 (delete it for a full bucket)");
  }
  return l;
}

std::optional<std::int64_t> LimitFields::ms_to_next_token() const {
  const std::optional<QueueLimits> l = limits();
  const std::optional<std::int64_t> credit = bucket_credit(rate_credit);
  if (!l || !l->rate) return std::nullopt;
  if (!credit) return 0;  // no bucket yet: a full one
  return ms_to_token(*l->rate, *credit);
}

std::optional<std::int64_t> LimitFields::credit_at(std::int64_t now_ms) const {
  const std::optional<QueueLimits> l = limits();
  if (!l || !l->rate) return std::nullopt;
  const std::int64_t full = l->rate->max * l->rate->window_ms;
  const std::optional<std::int64_t> credit = bucket_credit(rate_credit);
  const std::optional<std::int64_t> at = bucket_at(rate_at);
  if (!credit || !at) return full;  // claim's reading of an absent bucket
  const std::int64_t elapsed = std::min(std::max<std::int64_t>(now_ms - *at, 0), l->rate->window_ms);
  return std::min(full, *credit + elapsed * l->rate->max);
}

LimitStatus limit_status(const LimitFields& f, std::int64_t active, std::int64_t now_ms) {
  LimitStatus s;
  s.limits = f.limits(&s.broken);
  if (!s.limits) {
    s.held_back = "broken limit: " + s.broken;
    return s;
  }
  if (s.limits->max_active && active >= *s.limits->max_active) {
    s.held_back =
        "max_active " + std::to_string(*s.limits->max_active) + " reached (" + std::to_string(active) + " active)";
  }
  if (const std::optional<std::int64_t> credit = f.credit_at(now_ms)) {
    const RateLimit& r = *s.limits->rate;
    s.tokens = *credit / r.window_ms;
    if (*s.tokens == 0) {
      s.ms_to_token = ms_to_token(r, *credit);
      if (s.held_back.empty()) {
        s.held_back = "rate: no token left (next in " + std::to_string(s.ms_to_token) + " ms)";
      }
    }
  }
  return s;
}

Command limit_fields_read(const QueueKeys& q) {
  return {"HMGET", q.meta, "max_active", "rate_max", "rate_window_ms", "rate_credit", "rate_at"};
}

LimitFields decode_limit_fields(const Reply& r) {
  return {field(r, 0), field(r, 1), field(r, 2), field(r, 3), field(r, 4)};
}

std::vector<Command> limits_write(const QueueKeys& q, const QueueLimits& was, const QueueLimits& want) {
  Command set{"HSET", q.meta}, del{"HDEL", q.meta};
  if (want.max_active) {
    set.insert(set.end(), {"max_active", std::to_string(*want.max_active)});
  } else {
    del.push_back("max_active");
  }
  if (want.rate) {
    set.insert(set.end(),
               {"rate_max", std::to_string(want.rate->max), "rate_window_ms", std::to_string(want.rate->window_ms)});
  } else {
    del.insert(del.end(), {"rate_max", "rate_window_ms"});
  }
  if (want.rate != was.rate) del.insert(del.end(), {"rate_credit", "rate_at"});
  std::vector<Command> out;
  if (set.size() > 2) out.push_back(std::move(set));
  if (del.size() > 2) out.push_back(std::move(del));
  return out;
}

std::string describe(const QueueLimits& l) {
  std::string out;
  if (l.max_active) out = "max_active " + std::to_string(*l.max_active);
  if (l.rate) {
    out += (out.empty() ? "" : ", ") + std::string("rate ") + std::to_string(l.rate->max) + "/" +
           std::to_string(l.rate->window_ms) + "ms";
  }
  return out.empty() ? "none" : out;
}

}  // namespace echomq
