#include "echomq/backoff.h"

#include <gtest/gtest.h>

namespace echomq {
namespace {

TEST(Backoff, GrowsByTheMultiplierWithoutJitter) {
  std::mt19937_64 rng(1);
  BackoffPolicy p{1000, 2.0, 3600000, 0.0};
  EXPECT_EQ(backoff_delay_ms(p, 1, rng), 1000);
  EXPECT_EQ(backoff_delay_ms(p, 2, rng), 2000);
  EXPECT_EQ(backoff_delay_ms(p, 5, rng), 16000);
}

TEST(Backoff, CapsAtMaxEvenForHugeAttempts) {
  std::mt19937_64 rng(1);
  BackoffPolicy p{1000, 2.0, 60000, 0.0};
  EXPECT_EQ(backoff_delay_ms(p, 7, rng), 60000);
  EXPECT_EQ(backoff_delay_ms(p, 100000, rng), 60000);
}

TEST(Backoff, JitterOnlyShortensAndStaysWithinItsShare) {
  std::mt19937_64 rng(42);
  BackoffPolicy p{1000, 2.0, 10000, 0.2};
  for (int i = 0; i < 1000; ++i) {
    std::int64_t d = backoff_delay_ms(p, 3, rng);
    EXPECT_GE(d, 3200);
    EXPECT_LE(d, 4000);
  }
}

TEST(Backoff, ZeroInitialMeansNoDelay) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(backoff_delay_ms({0, 2.0, 1000, 0.5}, 3, rng), 0);
}

}  // namespace
}  // namespace echomq
