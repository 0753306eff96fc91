// The cron grammar: what parses to which times, and errors that name the
// field and what it expected.
#include <gtest/gtest.h>

#include <string>

#include "schedule/cron_expression.h"

namespace echomq::daemon {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_cron(text);
  } catch (const CronError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(CronExpression, ParsesListsRangesStepsAndNames) {
  CronExpression e = parse_cron("5,10-12,*/20 1-5/2 * jan,Mar-may MON-fri");
  EXPECT_TRUE(e.minutes[5] && e.minutes[10] && e.minutes[11] && e.minutes[12]);
  EXPECT_TRUE(e.minutes[0] && e.minutes[20] && e.minutes[40]);
  EXPECT_EQ(e.minutes.count(), 7u);
  EXPECT_EQ(e.hours.count(), 3u);
  EXPECT_TRUE(e.hours[1] && e.hours[3] && e.hours[5]);
  EXPECT_EQ(e.months.count(), 4u);
  EXPECT_TRUE(e.months[1] && e.months[3] && e.months[4] && e.months[5]);
  EXPECT_EQ(e.days_of_week.count(), 5u);
  EXPECT_FALSE(e.days_of_week[0]);
  EXPECT_TRUE(e.day_of_month_star);
  EXPECT_FALSE(e.day_of_week_star);
}

TEST(CronExpression, StartSlashStepRunsToTheEndAndSevenIsSunday) {
  CronExpression e = parse_cron("50/5 * * * 7");
  EXPECT_EQ(e.minutes.count(), 2u);
  EXPECT_TRUE(e.minutes[50] && e.minutes[55]);
  EXPECT_TRUE(e.days_of_week[0]);
  EXPECT_EQ(e.days_of_week.count(), 1u);
}

TEST(CronExpression, AtNamesAreTheirFiveFields) {
  EXPECT_EQ(parse_cron("@hourly").minutes.count(), 1u);
  EXPECT_EQ(parse_cron("@daily").hours.count(), 1u);
  EXPECT_TRUE(parse_cron("@weekly").days_of_week[0]);
  EXPECT_EQ(parse_cron("@monthly").days_of_month.count(), 1u);
  EXPECT_EQ(parse_cron("@yearly").months.count(), 1u);
  EXPECT_EQ(parse_cron("@annually").months.count(), 1u);
  EXPECT_EQ(parse_cron("@midnight").hours.count(), 1u);
}

TEST(CronExpression, DayFieldsFollowVixie) {
  // Both restricted: either matches.
  CronExpression either = parse_cron("0 0 1,15 * mon");
  EXPECT_TRUE(either.matches_day(1, 3));
  EXPECT_TRUE(either.matches_day(2, 1));
  EXPECT_FALSE(either.matches_day(2, 3));
  // A field written with '*' (even "*/2") is unrestricted: both must match.
  CronExpression both = parse_cron("0 0 */2 * mon");
  EXPECT_TRUE(both.matches_day(3, 1));
  EXPECT_FALSE(both.matches_day(2, 1));
  EXPECT_FALSE(both.matches_day(3, 2));
  // "1-31" is written restricted, though it covers every day: either.
  CronExpression every = parse_cron("0 0 1-31 * mon");
  EXPECT_TRUE(every.matches_day(2, 3));
}

TEST(CronExpression, ErrorsNameTheFieldAndWhatItExpected) {
  EXPECT_EQ(error_of("61 * * * *"), "minute 61 out of 0-59");
  EXPECT_EQ(error_of("* 24 * * *"), "hour 24 out of 0-23");
  EXPECT_EQ(error_of("* * 0 * *"), "day-of-month 0 out of 1-31");
  EXPECT_EQ(error_of("* * * 13 *"), "month 13 out of 1-12");
  EXPECT_EQ(error_of("* * * * 8"), "day-of-week 8 out of 0-7");
  EXPECT_EQ(error_of("* * * foo *"), "month 'foo' is not a number (a number or a name like jan)");
  EXPECT_EQ(error_of("*/0 * * * *"), "minute step '0' is not a positive number");
  EXPECT_EQ(error_of("5-1 * * * *"), "minute range 5-1 runs backwards (write it low-high)");
  EXPECT_EQ(error_of("1,,2 * * * *"), "minute has an empty item in '1,,2'");
  EXPECT_EQ(error_of("* * * *"), "expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(error_of("* * * * * *"), "expected 5 fields (minute hour day-of-month month day-of-week), got 6");
  EXPECT_EQ(error_of("@reboot"),
            "unknown name '@reboot': use @hourly, @daily, @weekly, @monthly, @yearly, or 5 fields");
  EXPECT_EQ(error_of("0 0 30 2 *"), "day-of-month 30 never occurs in month 2");
  EXPECT_EQ(error_of(""), "expected 5 fields (minute hour day-of-month month day-of-week), got 0");
}

}  // namespace
}  // namespace echomq::daemon
