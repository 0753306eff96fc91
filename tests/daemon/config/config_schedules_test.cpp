// The `schedules:` list: what loads, and each mistake refused with exactly
// one error, "FILE:LINE: KEY: ...", at the right line and key.
#include <gtest/gtest.h>

#include <limits>

#include "config/config.h"
#include "config/config_schedules.h"
#include "text/duration.h"
#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

const char* kQueues = R"(queues:
  - name: q
    handler: { type: exec, command: [/bin/cat] }
schedules:
)";

struct BadSchedule {
  const char* name;
  const char* entries;  // after "schedules:", from line 5
  int line;
  const char* key;
  const char* fragment;
};

const BadSchedule kBad[] = {
    {"bad_expression", "  - { name: a, queue: q, cron: \"61 * * * *\" }\n", 5, "schedules[0].cron",
     "minute 61 out of 0-59 in \"61 * * * *\""},
    {"bad_day_of_week", "  - name: a\n    queue: q\n    cron: \"0 0 * * fri-mon\"\n", 7, "schedules[0].cron",
     "day-of-week range fri-mon runs backwards"},
    {"unknown_zone", "  - name: a\n    queue: q\n    cron: \"@daily\"\n    timezone: Europe/Atlantis\n", 8,
     "schedules[0].timezone", "unknown time zone 'Europe/Atlantis'"},
    {"duplicate_name", "  - { name: a, queue: q, every: 1m }\n  - { name: a, queue: q, every: 2m }\n", 6,
     "schedules[1].name", "duplicate schedule a in queue q, first defined at line 5"},
    {"cron_and_every", "  - name: a\n    queue: q\n    cron: \"@daily\"\n    every: 1h\n", 8, "schedules[0].every",
     "a schedule has cron or every, not both"},
    {"neither", "  - name: a\n    queue: q\n", 5, "schedules[0].cron", "missing; expected cron:"},
    {"grace_out_of_range", "  - { name: a, queue: q, every: 1m, misfire_grace: 8d }\n", 5, "schedules[0].misfire_grace",
     "expected 0s to 7d, got 8d"},
    {"grace_not_a_duration", "  - { name: a, queue: q, every: 1m, misfire_grace: soon }\n", 5,
     "schedules[0].misfire_grace", "expected a duration such as 500ms, 30s"},
    {"every_too_short", "  - { name: a, queue: q, every: 10ms }\n", 5, "schedules[0].every",
     "expected 1s to 366d, got 10ms"},
    // Past int64 in ms: it used to wrap to 4.7 h and be taken.
    {"every_past_int64", "  - { name: a, queue: q, every: 640511947004d }\n", 5, "schedules[0].every",
     "expected 1s to 366d, got 640511947004d"},
    {"grace_past_int64", "  - { name: a, queue: q, every: 1m, misfire_grace: 640511947004d }\n", 5,
     "schedules[0].misfire_grace", "expected 0s to 7d, got 640511947004d"},
    {"bad_overlap", "  - { name: a, queue: q, every: 1m, overlap: wait }\n", 5, "schedules[0].overlap",
     "expected one of allow, skip, got wait"},
    {"unknown_key", "  - { name: a, queue: q, every: 1m, timezon: UTC }\n", 5, "schedules[0].timezon",
     "did you mean timezone?"},
    {"bad_queue_name", "  - { name: a, queue: \"a:b\", every: 1m }\n", 5, "schedules[0].queue",
     "expected 1-64 characters"},
    {"bad_group", "  - { name: a, queue: q, every: 1m, group: \"a b\" }\n", 5, "schedules[0].group",
     "expected a group of 1-128 characters of A-Z a-z 0-9 _ . : -, got \"a b\""},
    {"bad_unique_key", "  - { name: a, queue: q, every: 1m, unique: \"a b\" }\n", 5, "schedules[0].unique",
     "expected 1-128 characters of A-Z a-z 0-9 _ . : -"},
    {"bad_unique_mode", "  - { name: a, queue: q, every: 1m, unique: k, unique_mode: once }\n", 5,
     "schedules[0].unique_mode", "expected one of finished, started, window, replace, got once"},
    {"unique_mode_without_a_key", "  - { name: a, queue: q, every: 1m, unique_mode: started }\n", 5,
     "schedules[0].unique_mode", "needs unique"},
    {"window_without_unique_for", "  - { name: a, queue: q, every: 1m, unique: k, unique_mode: window }\n", 5,
     "schedules[0].unique_mode", "window needs unique_for"},
    {"unique_for_of_another_mode",
     "  - { name: a, queue: q, every: 1m, unique: k, unique_mode: started, unique_for: 1m }\n", 5,
     "schedules[0].unique_for", "only unique_mode window takes a window"},
};

class BadScheduleConfig : public ::testing::TestWithParam<BadSchedule> {};

TEST_P(BadScheduleConfig, ReportsOneErrorAtItsLineAndKey) {
  const BadSchedule& c = GetParam();
  TempDir dir;
  const std::string path = dir.write("emqd.yaml", std::string(kQueues) + c.entries);
  expect_one_error_at(path, c.line, c.key, c.fragment);
}

INSTANTIATE_TEST_SUITE_P(Entries, BadScheduleConfig, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadSchedule>& p) { return p.param.name; });

TEST(ScheduleConfig, LoadsEveryKeyAndTheDefaults) {
  TempDir dir;
  const std::string path = dir.write("emqd.yaml", std::string(kQueues) + R"(  - name: nightly-report
    queue: reports
    cron: "30 2 * * *"
    timezone: Europe/Berlin
    payload: '{"kind":"nightly"}'
    lane: -3
    overlap: skip
    misfire_grace: 5m
  - name: heartbeat
    queue: q
    every: 30s
)");
  Config c = load_config(path);
  ASSERT_EQ(c.schedules.size(), 2u);
  const ScheduleConfig& a = c.schedules[0];
  EXPECT_EQ(a.name, "nightly-report");
  EXPECT_EQ(a.queue, "reports");
  EXPECT_EQ(a.cron, "30 2 * * *");
  EXPECT_EQ(a.every_ms, 0);
  EXPECT_EQ(a.timezone, "Europe/Berlin");
  EXPECT_EQ(a.payload, "{\"kind\":\"nightly\"}");
  EXPECT_EQ(a.lane, -3);
  EXPECT_TRUE(a.skip_overlap);
  EXPECT_EQ(a.misfire_grace_ms, 300000);
  const ScheduleConfig& b = c.schedules[1];
  EXPECT_EQ(b.every_ms, 30000);
  EXPECT_EQ(b.timezone, "UTC");
  EXPECT_EQ(b.payload, "");
  EXPECT_FALSE(b.skip_overlap);
  EXPECT_EQ(b.misfire_grace_ms, 60000);
}

TEST(ScheduleConfig, AScheduleMayNameAUniqueKeyItsModeAndWindow) {
  TempDir dir;
  const std::string path =
      dir.write("emqd.yaml", std::string(kQueues) +
                                 "  - { name: a, queue: q, every: 1m, unique: report:a }\n"
                                 "  - { name: b, queue: q, every: 1m, unique: b, unique_for: 10m }\n"
                                 "  - { name: c, queue: q, every: 1m, unique: c, unique_mode: started }\n");
  Config c = load_config(path);
  ASSERT_EQ(c.schedules.size(), 3u);
  EXPECT_EQ(c.schedules[0].unique, "report:a");
  EXPECT_EQ(c.schedules[0].unique_mode, "");
  EXPECT_EQ(c.schedules[0].unique_for_ms, 0);
  EXPECT_EQ(c.schedules[1].unique_for_ms, 600000);
  EXPECT_EQ(c.schedules[2].unique_mode, "started");
}

TEST(ScheduleConfig, AScheduleMayNameTheGroupOfItsJobs) {
  TempDir dir;
  const std::string path = dir.write("emqd.yaml", std::string(kQueues) +
                                                      "  - { name: a, queue: q, every: 1m, group: cust.42 }\n"
                                                      "  - { name: b, queue: q, every: 1m }\n");
  Config c = load_config(path);
  ASSERT_EQ(c.schedules.size(), 2u);
  EXPECT_EQ(c.schedules[0].group, "cust.42");
  EXPECT_EQ(c.schedules[1].group, "") << "no group: the jobs are ungrouped";
}

TEST(ScheduleConfig, TheSameNameInTwoQueuesIsTwoSchedules) {
  TempDir dir;
  const std::string path = dir.write("emqd.yaml", std::string(kQueues) +
                                                      "  - { name: a, queue: q, every: 1m }\n"
                                                      "  - { name: a, queue: r, every: 1m }\n");
  EXPECT_EQ(load_config(path).schedules.size(), 2u);
}

TEST(ScheduleConfig, DurationsReadTheirUnits) {
  EXPECT_EQ(parse_duration_ms("500ms"), 500);
  EXPECT_EQ(parse_duration_ms("30s"), 30000);
  EXPECT_EQ(parse_duration_ms("5m"), 300000);
  EXPECT_EQ(parse_duration_ms("2h"), 7200000);
  EXPECT_EQ(parse_duration_ms("1d"), 86400000);
  EXPECT_FALSE(parse_duration_ms("5"));
  EXPECT_FALSE(parse_duration_ms("m"));
  EXPECT_FALSE(parse_duration_ms("-1s"));
  EXPECT_FALSE(parse_duration_ms("1.5s"));
  // Too long to count in ms: the most there is, which every range refuses.
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(parse_duration_ms("640511947004d"), kMost);
  EXPECT_EQ(parse_duration_ms("9223372036854775807ms"), kMost);
  EXPECT_EQ(parse_duration_ms("9223372036854775808ms"), kMost);
  EXPECT_EQ(parse_duration_ms(std::string(200000, '9') + "s"), kMost);
  EXPECT_FALSE(parse_duration_ms(std::string(200000, '9') + "parsecs"));
}

}  // namespace
}  // namespace echomq::daemon::test
