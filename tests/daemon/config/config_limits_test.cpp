// `limits:` in defaults and per queue: optional, replaced whole, windows in
// units, and every bad value named with its line and key.
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

constexpr const char* kHandler = "    handler: { type: exec, command: [/bin/cat] }\n";

TEST(ConfigLimits, PerQueueOverDefaultsReplacedWholeAndAbsentIsNone) {
  TempDir dir;
  const Config c = load_config(
      dir.write("limits.yaml", std::string("defaults:\n  limits: { max_active: 7 }\nqueues:\n") +
                                   "  - name: partner\n    limits:\n      rate: { max: 100, per: 1s }\n" + kHandler +
                                   "  - name: inherits\n" + kHandler +
                                   "  - name: slow\n    limits: { rate: { max: 3, per: 2h } }\n" + kHandler));
  ASSERT_EQ(c.queues.size(), 3u);
  ASSERT_TRUE(c.queues[0].limits);
  EXPECT_FALSE(c.queues[0].limits->max_active) << "a queue's limits replace the defaults' whole";
  EXPECT_EQ(c.queues[0].limits->rate, (RateLimit{100, 1000}));
  ASSERT_TRUE(c.queues[1].limits);
  EXPECT_EQ(c.queues[1].limits->max_active, 7);
  EXPECT_EQ(c.queues[2].limits->rate, (RateLimit{3, 7200000}));

  const Config none = load_config(dir.write("none.yaml", std::string("queues:\n  - name: q\n") + kHandler));
  EXPECT_FALSE(none.queues[0].limits) << "no limits: meta is left as it is";
}

TEST(ConfigLimits, BadLimitsAreNamedWithTheirLine) {
  TempDir dir;
  const std::string text = std::string("queues:\n  - name: q\n    limits:\n") +
                           "      max_active: 0\n"                     // line 4
                           "      rate: { max: 10, per: 1 second }\n"  // line 5
                           "      burst: 3\n" +                        // line 6
                           kHandler +
                           "  - name: r\n    limits: { rate: { max: 10 } }\n" + kHandler +
                           "  - name: s\n    limits: { rate: { max: 2000000, per: 25h } }\n" + kHandler;
  const std::string errors = joined(load_errors(dir.write("bad.yaml", text)));
  EXPECT_NE(errors.find(":4: queues[0].limits.max_active"), std::string::npos) << errors;
  EXPECT_NE(errors.find(":5: queues[0].limits.rate.per"), std::string::npos) << errors;
  EXPECT_NE(errors.find("burst"), std::string::npos) << errors;
  EXPECT_NE(errors.find("expected both max and per"), std::string::npos) << errors;
  EXPECT_NE(errors.find("limits.rate.max"), std::string::npos) << errors;
  EXPECT_NE(errors.find("1ms to 24h"), std::string::npos) << errors;
}

TEST(ConfigLimits, AWindowPastInt64IsRefusedNotWrapped) {
  TempDir dir;
  // 640511947004 days in ms wrap int64 to 4.7 h, which the range took.
  const std::string text = std::string("queues:\n  - name: q\n") +
                           "    limits: { rate: { max: 5, per: 640511947004d } }\n" +  // line 3
                           kHandler;
  expect_one_error_at(dir.write("bad.yaml", text), 3, "queues[0].limits.rate.per", "expected a window of 1ms to 24h");
}

}  // namespace
}  // namespace echomq::daemon::test
