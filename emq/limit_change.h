// A queue's limits read from their text forms and written to its meta:
// what `emq limit` and the page's limits form both do, so a value one
// refuses the other refuses with the same words.
#pragma once

#include <optional>
#include <string>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/limits.h"

namespace echomq::cli {

// "N" (1..1000000) or "off" (nullopt). Throws Error{Invalid} whose op is
// `field`, the name the caller's user knows the value by (--max-active,
// max_active).
std::optional<std::int64_t> max_active_of(const std::string& text, const std::string& field);
// "N/PERIOD" (100/1s, 5/500ms, 1000/m) or "off"; throws as max_active_of.
std::optional<RateLimit> rate_of(const std::string& text, const std::string& field);

// What to change: an outer nullopt leaves the limit as it is; an inner
// one turns it off.
struct LimitChange {
  std::optional<std::optional<std::int64_t>> max_active;
  std::optional<std::optional<RateLimit>> rate;
};

struct LimitsWritten {
  QueueLimits before;
  QueueLimits now;
  std::string was_broken;  // why the limits read were broken, "" when not
};

// Reads the limits, applies the change, writes them (limits_write).
LimitsWritten change_limits(Executor& x, const QueueKeys& q, const LimitChange& change);

}  // namespace echomq::cli
