// A schedule's marker read as enqueue_cron reads it: digits (at most
// 10^15), a colon, an id of one byte or more; anything else is broken.
#include <gtest/gtest.h>

#include "schedule/cron_marker.h"

namespace echomq::daemon {
namespace {

TEST(CronMarker, ReadsWhatEnqueueCronWritesAndNothingElse) {
  auto m = parse_cron_marker("1700000000000:JOB_a:b");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->fire_ms, 1700000000000);
  EXPECT_EQ(m->job, "JOB_a:b");
  EXPECT_EQ(m->text, "1700000000000:JOB_a:b");
  EXPECT_EQ(parse_cron_marker("1000000000000000:x")->fire_ms, 1000000000000000);
  for (const char* broken : {"garbage", "", ":JOB_x", "12:", "-5:JOB_x", " 5:JOB_x", "1e3:JOB_x",
                             "1000000000000001:JOB_x", "99999999999999999999999:JOB_x"}) {
    EXPECT_FALSE(parse_cron_marker(broken)) << broken;
  }
}

TEST(CronMarker, AnExcerptIsCutForALogLine) {
  EXPECT_EQ(marker_excerpt("12:JOB_x"), "12:JOB_x");
  EXPECT_EQ(marker_excerpt(std::string(100, 'a')), std::string(80, 'a') + "...");
}

}  // namespace
}  // namespace echomq::daemon
