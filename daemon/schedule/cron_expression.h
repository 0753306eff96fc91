// A 5-field cron expression (minute hour day-of-month month day-of-week),
// or one of the @ names, parsed into the set of local times it matches.
// Day-of-month and day-of-week both restricted means either, as in Vixie
// cron: a field is unrestricted when it starts with '*'.
#pragma once

#include <bitset>
#include <stdexcept>
#include <string>
#include <string_view>

namespace echomq::daemon {

// Thrown by parse_cron; what() names the field and what it expected,
// e.g. "minute 61 out of 0-59".
class CronError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CronExpression {
  std::string text;               // as written, for logs and the published definition
  std::bitset<60> minutes;        // 0-59
  std::bitset<24> hours;          // 0-23
  std::bitset<32> days_of_month;  // 1-31
  std::bitset<13> months;         // 1-12
  std::bitset<7> days_of_week;    // 0-6, Sunday 0 (7 is read as 0)
  bool day_of_month_star = false;
  bool day_of_week_star = false;

  // Whether a calendar day matches the two day fields (Vixie's rule).
  bool matches_day(unsigned day_of_month, unsigned day_of_week) const;
};

CronExpression parse_cron(std::string_view text);

}  // namespace echomq::daemon
