// emq limit: shows a queue's limits and bucket, sets them for every
// speaker at once (the next claim obeys), and a changed rate starts a
// full bucket.
#include <gtest/gtest.h>

#include <string>

#include "cli_fixture.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class LimitCli : public CliTest {
 protected:
  std::string meta(const std::string& field) { return x().command({"HGET", keys().meta, field}).str; }
};

TEST_F(LimitCli, SetLimitsTakeEffectAtTheNextClaim) {
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(enqueue(x(), keys(), "JOB_l" + std::to_string(i), "p"), EnqueueResult::Enqueued);
  }
  EmqResult r = emq({"limit", queue(), "--max-active", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "limits of " + queue() + ": max_active 2\n");
  EXPECT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 2u);
  r = emq({"stats", queue()});
  EXPECT_NE(r.out.find("limits of " + queue() + ": max_active 2; held back: max_active 2 reached (2 active)\n"),
            std::string::npos)
      << r.out;

  r = emq({"limit", queue(), "--max-active", "off", "--rate", "1/1h"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "limits of " + queue() + ": rate 1/3600000ms (the bucket starts full)\n");
  EXPECT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 1u) << "one token";
  EXPECT_TRUE(claim(x(), keys(), {30000, 10, 0}).empty());
  // The token is spent; credit regrows at 1 per ms (tokens x window), so
  // a millisecond between the two claims leaves "1", not "0".
  const long long credit = std::stoll(meta("rate_credit"));
  EXPECT_GE(credit, 0);
  EXPECT_LT(credit, 60000) << "less than a minute's regrowth, far from a whole token (3600000)";

  r = emq({"limit", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("max_active  off (active now 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rate        1 per 3600000 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bucket      0 whole tokens now"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("held back   rate: no token left (next in "), std::string::npos) << r.out;

  r = emq({"limit", queue(), "--rate", "2/1h"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(meta("rate_credit"), "") << "a changed rate deletes the bucket";
  EXPECT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 2u) << "a full bucket at the new rate";

  r = emq({"limit", queue(), "--rate", "off"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 1u) << "no limit left";
}

TEST_F(LimitCli, BadValuesAreUsageErrorsAndABrokenLimitIsShown) {
  for (const auto& bad :
       std::vector<std::vector<std::string>>{{"--max-active", "0"},
                                             {"--max-active", "many"},
                                             {"--rate", "5"},
                                             {"--rate", "5/2d"},
                                             {"--rate", "0/1s"},
                                             // Past int64 in ms: it used to wrap to 4.7 h and be taken.
                                             {"--rate", "5/640511947004d"}}) {
    EmqResult r = emq({"limit", queue(), bad[0], bad[1]});
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1];
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
  }
  x().command({"HSET", keys().meta, "max_active", "lots"});
  EmqResult r = emq({"limit", queue()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("broken: max_active must be an integer in 1..1000000"), std::string::npos) << r.out;
  r = emq({"limit", queue(), "--max-active", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(meta("max_active"), "3");
}

// Issue 37 row 7: a 60,000-character --rate overflowed the stack of the
// std::regex that read it (SIGSEGV). A usage error naming the option, and
// the value shortened in it.
TEST_F(LimitCli, AHugeValueIsAUsageErrorNotACrash) {
  const std::string digits(60000, '1');
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--rate", "5/" + digits + "s"},
                                                               {"--rate", "5/1" + std::string(60000, 's')},
                                                               {"--rate", digits + "/1s"},
                                                               {"--max-active", digits}}) {
    EmqResult r = emq({"limit", queue(), bad[0], bad[1]});
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1].substr(0, 20) << ": " << r.err.substr(0, 500);
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err.substr(0, 500);
    EXPECT_LT(r.err.size(), 1000u) << "the value is shortened, not echoed whole";
  }
  EXPECT_EQ(meta("rate_max"), "") << "nothing was written";
  EXPECT_EQ(meta("max_active"), "");
}

// Issue 37 row 21: limits on a name no daemon registered are set (a queue
// may be limited before its first daemon), with the note emq pause gives.
TEST_F(LimitCli, ALimitOnAnUnknownQueueWarnsButIsSet) {
  EmqResult r = emq({"limit", queue(), "--max-active", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: " + queue() + " is not a known queue (not in {emq}:queues); check the name"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(meta("max_active"), "4");
  r = emq({"limit", queue()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("is not a known queue"), std::string::npos) << "shown too: " << r.err;

  register_queues(x(), {queue()});
  r = emq({"limit", queue(), "--max-active", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "a registered queue gets no note";
}

}  // namespace
}  // namespace echomq::test
