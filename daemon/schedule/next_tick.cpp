#include "schedule/next_tick.h"

#include <date/tz.h>

#include <chrono>

namespace echomq::daemon {

namespace {

using date::days;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using LocalMinutes = date::local_time<minutes>;

constexpr auto kHorizon = days(366 * 50);

// The first local minute at or after `from` that the expression matches,
// skipping whole months, days and hours that cannot match; nullopt past
// `until`.
std::optional<LocalMinutes> next_match(const CronExpression& e, LocalMinutes from, LocalMinutes until) {
  LocalMinutes t = from;
  while (t <= until) {
    auto day = date::floor<days>(t);
    date::year_month_day ymd{day};
    auto month = static_cast<unsigned>(ymd.month());
    if (!e.months[month]) {
      date::year_month next = date::year_month{ymd.year(), ymd.month()} + date::months(1);
      t = LocalMinutes{date::local_days{next / 1}};
      continue;
    }
    auto weekday = date::weekday{day}.c_encoding();
    if (!e.matches_day(static_cast<unsigned>(ymd.day()), weekday)) {
      t = LocalMinutes{day + days(1)};
      continue;
    }
    auto since_midnight = t - LocalMinutes{day};
    auto hour = date::floor<hours>(since_midnight);
    if (!e.hours[static_cast<std::size_t>(hour.count())]) {
      t = LocalMinutes{day} + hour + hours(1);
      continue;
    }
    auto minute = (since_midnight - hour).count();
    if (!e.minutes[static_cast<std::size_t>(minute)]) {
      t += minutes(1);
      continue;
    }
    return t;
  }
  return std::nullopt;
}

// The instant a matched local time fires at, by DESIGN.md's daylight-saving
// rules. Monotone: a later local time never fires earlier.
std::int64_t fire_instant(const date::time_zone* zone, LocalMinutes local) {
  date::local_info info = zone->get_info(local);
  date::sys_seconds at;
  switch (info.result) {
    case date::local_info::nonexistent:
      at = info.second.begin;  // the first instant after the gap
      break;
    case date::local_info::ambiguous:  // first is the earlier offset
    case date::local_info::unique: at = date::sys_seconds{(local - info.first.offset).time_since_epoch()}; break;
  }
  return std::chrono::duration_cast<milliseconds>(at.time_since_epoch()).count();
}

}  // namespace

const date::time_zone* find_zone(std::string_view name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    throw ZoneError("unknown time zone '" + std::string(name) +
                    "': use an IANA name such as UTC or Europe/Berlin (the system's tzdata has the list)");
  }
}

TickRule TickRule::cron(CronExpression expression, const date::time_zone* zone) {
  TickRule r;
  r.cron_ = std::move(expression);
  r.zone_ = zone;
  return r;
}

TickRule TickRule::every(std::int64_t every_ms) {
  TickRule r;
  r.every_ms_ = every_ms;
  return r;
}

std::optional<std::int64_t> TickRule::next_after(std::int64_t after_ms) const {
  if (!cron_) {
    std::int64_t k = after_ms >= 0 ? after_ms / every_ms_ + 1 : -((-after_ms) / every_ms_);
    return k * every_ms_;
  }
  date::sys_time<milliseconds> after{milliseconds(after_ms)};
  // The local minute `after` falls in: no earlier local time fires after it
  // (fire_instant is monotone), but within it and later ones in a repeated
  // hour may fire before it, hence the check against after_ms.
  LocalMinutes local = date::floor<minutes>(zone_->to_local(after));
  LocalMinutes until = local + kHorizon;
  while (true) {
    std::optional<LocalMinutes> m = next_match(*cron_, local, until);
    if (!m) return std::nullopt;
    std::int64_t at = fire_instant(zone_, *m);
    if (at > after_ms) return at;
    local = *m + minutes(1);
  }
}

std::optional<TickRule::Due> TickRule::latest_between(std::int64_t after_ms, std::int64_t at_ms,
                                                      std::int64_t count_limit) const {
  if (at_ms <= after_ms) return std::nullopt;
  if (!cron_) {
    std::int64_t latest = at_ms >= 0 ? at_ms / every_ms_ * every_ms_ : *next_after(at_ms) - every_ms_;
    if (latest <= after_ms) return std::nullopt;
    std::int64_t first = *next_after(after_ms);
    return Due{latest, std::min((latest - first) / every_ms_, count_limit)};
  }
  std::optional<Due> due;
  std::int64_t t = after_ms;
  while (true) {
    std::optional<std::int64_t> next = next_after(t);
    if (!next || *next > at_ms) return due;
    if (due)
      due->earlier = std::min(due->earlier + 1, count_limit);
    else
      due = Due{};
    due->tick_ms = *next;
    t = *next;
    // Past the limit the count stops mattering: jump to the last stretch.
    if (due->earlier >= count_limit && at_ms - t > std::int64_t{86400000} * 2) t = at_ms - std::int64_t{86400000} * 2;
  }
}

}  // namespace echomq::daemon
