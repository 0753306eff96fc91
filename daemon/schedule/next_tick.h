// The tick times of a schedule: a cron expression read in an IANA time
// zone, or every N ms counted from the Unix epoch (so every daemon, started
// whenever, agrees on them). Times are epoch milliseconds of the server's
// clock.
//
// Daylight saving (DESIGN.md): a local time that does not exist that day
// fires at the first instant after the gap; a local time that occurs twice
// fires once, at its first occurrence. Several local times that fall into
// one gap fire once, at its end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "schedule/cron_expression.h"

namespace date {
class time_zone;
}

namespace echomq::daemon {

// Thrown by find_zone for a name the system's tzdata does not know.
class ZoneError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The zone from the system's tzdata (/usr/share/zoneinfo); "UTC" always works.
const date::time_zone* find_zone(std::string_view name);

class TickRule {
 public:
  static TickRule cron(CronExpression expression, const date::time_zone* zone);
  static TickRule every(std::int64_t every_ms);

  // The first tick strictly after after_ms; nullopt when none falls in the
  // next 50 years (croniter's bound too: "0 0 29 2 */3" fires, but only in
  // some leap years).
  std::optional<std::int64_t> next_after(std::int64_t after_ms) const;

  // The latest tick at or before at_ms and after after_ms (exclusive), and
  // how many ticks in that span came before it (at most `count_limit`).
  struct Due {
    std::int64_t tick_ms = 0;
    std::int64_t earlier = 0;
  };
  std::optional<Due> latest_between(std::int64_t after_ms, std::int64_t at_ms, std::int64_t count_limit) const;
  // The count_limit the scheduler and `emq schedules` pass: missed ticks
  // counted at most this many (a schedule stopped for a year at every: 1s).
  static constexpr std::int64_t kMissedCountLimit = 1000000;
  // A tick the running scheduler waited for fires when it reads the
  // server's clock within this much of it, whatever misfire_grace (so 0s
  // fires on time); grace is for ticks missed while no daemon waited for
  // them. `emq schedules` counts a tick missed only past both.
  static constexpr std::int64_t kOnTimeMs = 1000;

 private:
  TickRule() = default;
  std::optional<CronExpression> cron_;
  const date::time_zone* zone_ = nullptr;
  std::int64_t every_ms_ = 0;
};

}  // namespace echomq::daemon
