// Reading a queue's history (history.h): a sample's text, and per-interval
// counts as the differences of consecutive samples, with a counter reset
// read as 0 and a missing interval left out (a gap, not a zero).
#include "echomq/history.h"

#include <gtest/gtest.h>

namespace echomq {
namespace {

TEST(History, ASampleReadsBackAsWritten) {
  const HistoryCounts c{4'000'000'000, 12, 3, 0};
  EXPECT_EQ(history_value(c), "4000000000 12 3 0");
  EXPECT_EQ(parse_history_value(history_value(c)), c);
}

TEST(History, TextThatIsNotFourCountersIsNoSample) {
  for (const char* bad : {"", "1 2 3", "1 2 3 4 5", "1 2 3 x", "1  2 3 4", "-1 2 3 4", "1 2 3 4 ", " 1 2 3 4"}) {
    EXPECT_FALSE(parse_history_value(bad)) << "'" << bad << "'";
  }
}

TEST(History, CountsAreTheDifferencesOfConsecutiveSamples) {
  const std::vector<HistoryPoint> d =
      history_deltas({{100, {10, 8, 1, 0}}, {101, {15, 12, 2, 1}}, {102, {15, 12, 2, 1}}});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].interval, 100);
  EXPECT_EQ(d[0].counts, (HistoryCounts{5, 4, 1, 1}));
  EXPECT_EQ(d[1].interval, 101);
  EXPECT_EQ(d[1].counts, (HistoryCounts{0, 0, 0, 0})) << "a quiet interval is a zero";
}

TEST(History, ACounterThatWentDownReadsZeroNotNegative) {
  const std::vector<HistoryPoint> d = history_deltas({{7, {50, 40, 5, 5}}, {8, {3, 45, 0, 6}}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].counts, (HistoryCounts{0, 5, 0, 1}));
}

TEST(History, AMissingSampleIsAGapNotAZero) {
  // 11 is missing: neither 10 (10 -> 11) nor 11 (11 -> 12) can be counted.
  const std::vector<HistoryPoint> d =
      history_deltas({{9, {0, 0, 0, 0}}, {10, {1, 1, 0, 0}}, {12, {9, 9, 0, 0}}, {13, {10, 10, 0, 0}}});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].interval, 9);
  EXPECT_EQ(d[1].interval, 12);
  EXPECT_EQ(d[1].counts, (HistoryCounts{1, 1, 0, 0}));
  EXPECT_TRUE(history_deltas({}).empty());
  EXPECT_TRUE(history_deltas({{5, {1, 1, 1, 1}}}).empty()) << "one sample counts nothing yet";
}

TEST(History, KeysLiveInTheQueuesSlot) {
  EXPECT_EQ(history_key("mail", HistoryGrain::Minute), "emq:{mail}:history:minute");
  EXPECT_EQ(history_key("mail", HistoryGrain::Day), "emq:{mail}:history:day");
}

}  // namespace
}  // namespace echomq
