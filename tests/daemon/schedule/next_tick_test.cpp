// Tick times by hand at the daylight-saving changes of three zones (DESIGN.md:
// a local time that does not exist fires at the first instant after the gap,
// one that occurs twice fires once, at its first occurrence), and the
// every-N rule and the catch-up arithmetic the scheduler leans on.
#include <date/date.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "schedule/next_tick.h"

namespace echomq::daemon {
namespace {

using namespace date::literals;
using namespace std::chrono;

// Epoch ms of a UTC wall time.
std::int64_t utc(date::year_month_day day, int hour, int minute) {
  return duration_cast<milliseconds>((date::sys_days{day} + hours(hour) + minutes(minute)).time_since_epoch()).count();
}

std::int64_t next(const std::string& cron, const std::string& zone, std::int64_t after) {
  std::optional<std::int64_t> t = TickRule::cron(parse_cron(cron), find_zone(zone)).next_after(after);
  EXPECT_TRUE(t.has_value()) << cron;
  return t.value_or(-1);
}

// One tick time worked out by hand: the first tick of `cron` in `zone`
// strictly after `after`.
struct ByHand {
  const char* name;
  const char* cron;
  const char* zone;
  std::int64_t after;
  std::int64_t want;
};

const ByHand kByHand[] = {
    // Berlin: 2024-03-31 02:00 CET -> 03:00 CEST (01:00Z); 2024-10-27 03:00
    // CEST -> 02:00 CET (01:00Z).
    {"BerlinSpringGapFiresAtTheGapsEnd1", "30 2 * * *", "Europe/Berlin", utc(2024_y / 3 / 30, 12, 0),
     utc(2024_y / 3 / 31, 1, 0)},
    {"BerlinSpringGapFiresAtTheGapsEnd2", "30 2 * * *", "Europe/Berlin", utc(2024_y / 3 / 31, 1, 0),
     utc(2024_y / 4 / 1, 0, 30)},
    // Four local times in one gap fire once; 03:00 is that same instant.
    {"BerlinSpringGapFiresAtTheGapsEnd3", "*/15 2,3 * * *", "Europe/Berlin", utc(2024_y / 3 / 31, 0, 50),
     utc(2024_y / 3 / 31, 1, 0)},
    {"BerlinSpringGapFiresAtTheGapsEnd4", "*/15 2,3 * * *", "Europe/Berlin", utc(2024_y / 3 / 31, 1, 0),
     utc(2024_y / 3 / 31, 1, 15)},
    {"BerlinAutumnRepeatFiresOnceAtTheFirst1", "30 2 * * *", "Europe/Berlin", utc(2024_y / 10 / 26, 12, 0),
     utc(2024_y / 10 / 27, 0, 30)},
    {"BerlinAutumnRepeatFiresOnceAtTheFirst2", "30 2 * * *", "Europe/Berlin", utc(2024_y / 10 / 27, 0, 30),
     utc(2024_y / 10 / 28, 1, 30)},
    // Half-hourly: 02:00 and 02:30 CEST, then the repeated hour is silent,
    // then 03:00 CET.
    {"BerlinAutumnRepeatFiresOnceAtTheFirst3", "*/30 * * * *", "Europe/Berlin", utc(2024_y / 10 / 27, 0, 0),
     utc(2024_y / 10 / 27, 0, 30)},
    {"BerlinAutumnRepeatFiresOnceAtTheFirst4", "*/30 * * * *", "Europe/Berlin", utc(2024_y / 10 / 27, 0, 30),
     utc(2024_y / 10 / 27, 2, 0)},
    // New York: 2024-03-10 02:00 EST -> 03:00 EDT (07:00Z); 2024-11-03 02:00
    // EDT -> 01:00 EST (06:00Z).
    {"NewYorkSpringAndAutumn1", "30 2 * * *", "America/New_York", utc(2024_y / 3 / 9, 12, 0),
     utc(2024_y / 3 / 10, 7, 0)},
    {"NewYorkSpringAndAutumn2", "0 3 * * *", "America/New_York", utc(2024_y / 3 / 9, 12, 0),
     utc(2024_y / 3 / 10, 7, 0)},
    {"NewYorkSpringAndAutumn3", "30 1 * * *", "America/New_York", utc(2024_y / 11 / 2, 12, 0),
     utc(2024_y / 11 / 3, 5, 30)},
    {"NewYorkSpringAndAutumn4", "30 1 * * *", "America/New_York", utc(2024_y / 11 / 3, 5, 30),
     utc(2024_y / 11 / 4, 6, 30)},
    // From inside the second 01:xx: its ticks were taken at the first, so the
    // next is 02:00 EST.
    {"NewYorkSpringAndAutumn5", "*/20 * * * *", "America/New_York", utc(2024_y / 11 / 3, 6, 10),
     utc(2024_y / 11 / 3, 7, 0)},
    // Lord Howe shifts by 30 minutes: 2024-04-07 02:00 (+11) -> 01:30 (+10:30)
    // at 15:00Z on the 6th; 2024-10-06 02:00 (+10:30) -> 02:30 (+11) at 15:30Z
    // on the 5th.
    {"LordHoweHalfHourShifts1", "15 2 * * *", "Australia/Lord_Howe", utc(2024_y / 10 / 5, 0, 0),
     utc(2024_y / 10 / 5, 15, 30)},
    {"LordHoweHalfHourShifts2", "45 2 * * *", "Australia/Lord_Howe", utc(2024_y / 10 / 5, 0, 0),
     utc(2024_y / 10 / 5, 15, 45)},
    {"LordHoweHalfHourShifts3", "45 1 * * *", "Australia/Lord_Howe", utc(2024_y / 4 / 6, 0, 0),
     utc(2024_y / 4 / 6, 14, 45)},
    {"LordHoweHalfHourShifts4", "45 1 * * *", "Australia/Lord_Howe", utc(2024_y / 4 / 6, 14, 45),
     utc(2024_y / 4 / 7, 15, 15)},
    // 01:15 is not repeated (the repeat is 01:30-01:59): it fires every day.
    {"LordHoweHalfHourShifts5", "15 1 * * *", "Australia/Lord_Howe", utc(2024_y / 4 / 6, 0, 0),
     utc(2024_y / 4 / 6, 14, 15)},
    {"UtcAndFixedOffsetsIgnoreDaylightSaving1", "0 0 1 1 *", "UTC", utc(2024_y / 6 / 1, 0, 0),
     utc(2025_y / 1 / 1, 0, 0)},
    {"UtcAndFixedOffsetsIgnoreDaylightSaving2", "0 0 29 2 *", "UTC", utc(2024_y / 3 / 1, 0, 0),
     utc(2028_y / 2 / 29, 0, 0)},
    {"UtcAndFixedOffsetsIgnoreDaylightSaving3", "0 9 * * *", "Asia/Kolkata", utc(2024_y / 6 / 1, 0, 0),
     utc(2024_y / 6 / 1, 3, 30)},
};

class NextTickByHand : public ::testing::TestWithParam<ByHand> {};

TEST_P(NextTickByHand, IsTheTickWorkedOutByHand) {
  const ByHand& c = GetParam();
  EXPECT_EQ(next(c.cron, c.zone, c.after), c.want);
}

INSTANTIATE_TEST_SUITE_P(Zones, NextTickByHand, ::testing::ValuesIn(kByHand),
                         [](const ::testing::TestParamInfo<ByHand>& p) { return p.param.name; });

TEST(NextTick, EveryCountsFromTheEpoch) {
  TickRule r = TickRule::every(1000);
  EXPECT_EQ(r.next_after(0), 1000);
  EXPECT_EQ(r.next_after(999), 1000);
  EXPECT_EQ(r.next_after(1000), 2000);
  EXPECT_EQ(TickRule::every(30000).next_after(1712345678901), 1712345700000);
}

TEST(NextTick, LatestBetweenCountsTheTicksBeforeIt) {
  TickRule every = TickRule::every(1000);
  auto due = every.latest_between(10000, 15500, 1000);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->tick_ms, 15000);
  EXPECT_EQ(due->earlier, 4);  // 11000..14000
  EXPECT_FALSE(every.latest_between(10000, 10999, 1000));
  EXPECT_EQ(every.latest_between(0, 1000000, 7)->earlier, 7);

  TickRule hourly = TickRule::cron(parse_cron("0 * * * *"), find_zone("UTC"));
  auto h = hourly.latest_between(utc(2024_y / 1 / 1, 0, 0), utc(2024_y / 1 / 1, 5, 30), 1000);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->tick_ms, utc(2024_y / 1 / 1, 5, 0));
  EXPECT_EQ(h->earlier, 4);
  auto capped = hourly.latest_between(utc(2020_y / 1 / 1, 0, 0), utc(2024_y / 1 / 1, 5, 30), 10);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->tick_ms, utc(2024_y / 1 / 1, 5, 0));
  EXPECT_EQ(capped->earlier, 10);
}

TEST(NextTick, UnknownZoneSaysWhatToUse) {
  try {
    find_zone("Europe/Atlantis");
    FAIL() << "no error";
  } catch (const ZoneError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown time zone 'Europe/Atlantis': use an IANA name such as UTC or Europe/Berlin (the system's "
              "tzdata has the list)");
  }
}

}  // namespace
}  // namespace echomq::daemon
