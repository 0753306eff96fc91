// fail: retry through delayed (backoff_ms > 0) or pending (0), or dead by
// attempts or by permanent; failures and error recorded either way.
// Lease-lost replies are in fencing_test.cpp.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Fail : public WireTest {
 protected:
  // Claims the job `claims` times, failing it for retry in between, so its
  // attempts are `claims` when the test's own fail arrives.
  Lease claimed_times(const std::string& id, int claims) {
    Lease l;
    for (int n = 1; n <= claims; ++n) {
      l = claim_one(id);
      if (n < claims) {
        EXPECT_EQ(fail(x, q, l, {"earlier", 1000, 0, false}), FailResult::Retry);
      }
    }
    return l;
  }
};

TEST_F(Fail, RetriesThroughTheDelayedSetWhenThereIsABackoff) {
  Lease l = make_active("work");
  std::int64_t before = now_ms();
  Reply r = raw(fail_call(q, l, {"boom", 5, 5000, false}));
  std::int64_t after = now_ms();
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(decode_fail(r), FailResult::Retry);
  EXPECT_EQ(row(l.id), (Row{{"state", "delayed"},
                            {"attempts", "1"},
                            {"payload", "work"},
                            {"lease_epoch", "1"},
                            {"failures", "1"},
                            {"error", "boom"}}));
  std::int64_t due = score(q.delayed, l.id);
  EXPECT_GE(due, before + 5000);
  EXPECT_LE(due, after + 5000);
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"retried", 1}}));
}

TEST_F(Fail, RetriesStraightToPendingAtItsLaneWithoutABackoff) {
  std::string id = enqueue_new("work", {4, std::nullopt});
  Lease l = claim_one(id);
  EXPECT_EQ(fail(x, q, l, {"boom", 5, 0, false}), FailResult::Retry);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "1"},
                          {"payload", "work"},
                          {"lane", "4"},
                          {"lease_epoch", "1"},
                          {"failures", "1"},
                          {"error", "boom"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 4}}));
  EXPECT_EQ(zset(q.delayed), ZSet{});
}

// Dead or retry, by attempts against max_attempts, and by permanent.
struct Verdict {
  const char* name;
  int claims;  // attempts when fail arrives
  std::int64_t max_attempts;
  bool permanent;
  FailResult want;
};

class FailVerdict : public Fail, public ::testing::WithParamInterface<Verdict> {};

TEST_P(FailVerdict, SendsTheJobWhereTheRuleSays) {
  const Verdict v = GetParam();
  std::string id = enqueue_new("work");
  Lease l = claimed_times(id, v.claims);
  std::int64_t before = now_ms();
  EXPECT_EQ(fail(x, q, l, {"last words", v.max_attempts, 0, v.permanent}), v.want);
  std::int64_t after = now_ms();

  Row r = row(id);
  EXPECT_EQ(r.at("attempts"), std::to_string(v.claims));
  EXPECT_EQ(r.at("failures"), std::to_string(v.claims));
  EXPECT_EQ(r.at("error"), "last words");
  EXPECT_EQ(zset(q.active), ZSet{});
  if (v.want == FailResult::Dead) {
    EXPECT_EQ(r.at("state"), "dead");
    EXPECT_EQ(members(q.dead), (std::vector<std::string>{id}));
    std::int64_t died = score(q.dead, id);
    EXPECT_GE(died, before);
    EXPECT_LE(died, after);
    EXPECT_EQ(zset(q.pending), ZSet{});
    EXPECT_EQ(counters(), counters_with({{"claimed", v.claims}, {"retried", v.claims - 1}, {"dead", 1}}));
  } else {
    EXPECT_EQ(r.at("state"), "pending");
    EXPECT_EQ(zset(q.pending), (ZSet{{id, 0}}));
    EXPECT_EQ(zset(q.dead), ZSet{});
    EXPECT_EQ(counters(), counters_with({{"claimed", v.claims}, {"retried", v.claims}}));
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, FailVerdict,
                         ::testing::Values(Verdict{"FirstOfThree", 1, 3, false, FailResult::Retry},
                                           Verdict{"SecondOfThree", 2, 3, false, FailResult::Retry},
                                           Verdict{"ThirdOfThree", 3, 3, false, FailResult::Dead},
                                           Verdict{"OnlyAttempt", 1, 1, false, FailResult::Dead},
                                           Verdict{"PastALoweredMax", 3, 2, false, FailResult::Dead},
                                           Verdict{"PermanentOnFirst", 1, 5, true, FailResult::Dead}),
                         [](const ::testing::TestParamInfo<Verdict>& p) { return std::string(p.param.name); });

TEST_F(Fail, TheRowKeepsTheFirst4096BytesOfTheError) {
  std::string error(5000, 'e');
  for (std::size_t i = 0; i < error.size(); ++i) error[i] = static_cast<char>('a' + i % 26);
  error[10] = '\0';  // binary-safe too
  Lease l = make_active();
  ASSERT_EQ(fail(x, q, l, {error, 5, 0, false}), FailResult::Retry);
  EXPECT_EQ(row(l.id).at("error"), error.substr(0, 4096));
}

TEST_F(Fail, FailuresAccumulateAndTheErrorIsTheLatest) {
  std::string id = enqueue_new();
  for (int n = 1; n <= 3; ++n) {
    Lease l = claim_one(id);
    ASSERT_EQ(fail(x, q, l, {"error " + std::to_string(n), 10, 0, false}), FailResult::Retry);
    EXPECT_EQ(row(id).at("failures"), std::to_string(n));
    EXPECT_EQ(row(id).at("error"), "error " + std::to_string(n));
  }
}

}  // namespace
}  // namespace echomq::test
