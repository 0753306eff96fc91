// claim's limits (PROTOCOL.md, "Limits"): max_active and the rate's token
// bucket, read from meta, on either executor. The bucket is checked to the
// unit: claim writes rate_at = the server time it used, so each test knows
// the exact `now` and recomputes credit from the contract's formula.
#include "echomq/limits.h"
#include "wire_fixture.h"

namespace echomq::test {
namespace {

constexpr std::int64_t kHour = 3600000;

class ClaimLimits : public WireTest {
 protected:
  ScriptCall claim_call_of(std::int64_t max_count, std::int64_t promote_limit = 0) {
    return claim_call(q, {30000, max_count, promote_limit});
  }
  std::vector<std::string> enqueue_many(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(enqueue_new("p" + std::to_string(i)));
    return ids;
  }
  void set_meta(const std::vector<std::string>& fields_and_values) {
    Command c{"HSET", q.meta};
    c.insert(c.end(), fields_and_values.begin(), fields_and_values.end());
    cmd(c);
  }
  std::int64_t meta_int(const std::string& field) {
    const Row m = hash(q.meta);
    auto it = m.find(field);
    EXPECT_NE(it, m.end()) << field << " is not in meta";
    return it == m.end() ? -1 : std::stoll(it->second);
  }
  std::size_t claimed_by(const ScriptCall& call) {
    Reply r = raw(call);
    EXPECT_EQ(r.type, Reply::Type::Array) << r.str;
    return r.elements.size() / 4;
  }

  // The contract's credit before a claim at `now`, from the bucket as it was.
  static std::int64_t credit(std::int64_t rate_max, std::int64_t window, std::int64_t credit_was, std::int64_t at_was,
                             std::int64_t now) {
    const std::int64_t elapsed = std::min(std::max<std::int64_t>(now - at_was, 0), window);
    return std::min(rate_max * window, credit_was + elapsed * rate_max);
  }
};

TEST_F(ClaimLimits, MaxActiveTakesTheActiveSetsSizeIntoAccount) {
  enqueue_many(6);
  set_meta({"max_active", "4"});
  ASSERT_EQ(claimed_by(claim_call_of(1)), 1u);
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u) << "4 at once, 1 already active";
  EXPECT_EQ(zset(q.active).size(), 4u);
  EXPECT_EQ(zset(q.pending).size(), 2u);
  EXPECT_EQ(counters()["claimed"], 4);
  // At the limit: nothing claimed, and nothing written (no rate, no bucket).
  auto before = snapshot();
  EXPECT_EQ(claimed_by(claim_call_of(10)), 0u);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(hash(q.meta), (Row{{"max_active", "4"}}));
}

TEST_F(ClaimLimits, ALeaseThatEndsMakesRoomForOneMore) {
  enqueue_many(3);
  set_meta({"max_active", "1"});
  std::vector<ClaimedJob> first = claim(x, q, {30000, 5, 0});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(claim(x, q, {30000, 5, 0}).empty());
  ASSERT_EQ(complete(x, q, {first[0].id, first[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  EXPECT_EQ(claim(x, q, {30000, 5, 0}).size(), 1u);
}

TEST_F(ClaimLimits, AMaxActiveLoweredBelowTheActiveSetClaimsNothing) {
  enqueue_many(5);
  ASSERT_EQ(claimed_by(claim_call_of(3)), 3u);
  set_meta({"max_active", "2"});
  EXPECT_EQ(claimed_by(claim_call_of(5)), 0u);
  EXPECT_EQ(zset(q.active).size(), 3u) << "jobs already claimed keep their leases";
}

TEST_F(ClaimLimits, MaxActiveStillPromotesDueDelayedJobs) {
  set_meta({"max_active", "1"});
  ASSERT_EQ(claimed_by(claim_call_of(1)), 0u);
  enqueue_many(1);
  ASSERT_EQ(claimed_by(claim_call_of(1)), 1u);
  std::string due = enqueue_new("due", {0, now_ms() - 1});
  EXPECT_EQ(claimed_by(claim_call_of(5, 10)), 0u);
  EXPECT_EQ(members(q.pending), std::vector<std::string>{due}) << "promoted, not claimed";
  EXPECT_EQ(row(due).at("state"), "pending");
}

TEST_F(ClaimLimits, AnEmptyBucketIsAFullOneAndEveryClaimWritesIt) {
  enqueue_many(5);
  set_meta({"rate_max", "3", "rate_window_ms", std::to_string(kHour)});
  const std::int64_t before = now_ms();
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u);
  const std::int64_t after = now_ms();
  const std::int64_t at = meta_int("rate_at");
  EXPECT_GE(at, before);
  EXPECT_LE(at, after);
  const std::int64_t left = credit(3, kHour, 3 * kHour, 0, at) - 3 * kHour;
  EXPECT_EQ(meta_int("rate_credit"), left);
  EXPECT_EQ(counters()["claimed"], 3);

  // Nothing to take, and a claim still brings the bucket up to date.
  EXPECT_EQ(claimed_by(claim_call_of(10)), 0u);
  const std::int64_t at2 = meta_int("rate_at");
  EXPECT_GE(at2, at);
  EXPECT_EQ(meta_int("rate_credit"), credit(3, kHour, left, at, at2));
  EXPECT_EQ(zset(q.pending).size(), 2u);
}

TEST_F(ClaimLimits, APartRefilledBucketGivesTheWholeTokensItHolds) {
  enqueue_many(5);
  // 10 tokens an hour: one per 360,000 ms. 1,000,000 ms ago with half a
  // token: 0.5 + 2.78 tokens, so 3 claims (the test's few ms never reach
  // the fourth, 80,000 ms away).
  const std::int64_t planted_at = now_ms() - 1000000;
  set_meta({"rate_max", "10", "rate_window_ms", std::to_string(kHour), "rate_credit", std::to_string(kHour / 2),
            "rate_at", std::to_string(planted_at)});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u);
  const std::int64_t at = meta_int("rate_at");
  EXPECT_EQ(meta_int("rate_credit"), credit(10, kHour, kHour / 2, planted_at, at) - 3 * kHour);
  EXPECT_EQ(meta_int("rate_credit"), kHour / 2 + (at - planted_at) * 10 - 3 * kHour);
}

TEST_F(ClaimLimits, RefillIsCappedAtOneWindowAndTheBucketAtRateMaxTokens) {
  enqueue_many(8);
  // A day since the last claim refills one window's worth at most; a bucket
  // already holding 2 tokens ends full at 4, never 6.
  set_meta({"rate_max", "4", "rate_window_ms", "1000", "rate_credit", "2000", "rate_at",
            std::to_string(now_ms() - 86400000)});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 4u);
  EXPECT_EQ(meta_int("rate_credit"), 0);
  // A bucket over its cap (rate_max lowered by hand) gives the cap's worth.
  set_meta({"rate_max", "2", "rate_credit", "4000", "rate_at", std::to_string(now_ms() + kHour)});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 2u);
  EXPECT_EQ(meta_int("rate_credit"), 0);
}

TEST_F(ClaimLimits, AClockThatSteppedBackRefillsNothingAndRestartsFromNow) {
  enqueue_many(5);
  // rate_at an hour ahead of the server's clock: the clock stepped back
  // since the last claim. No refill, no negative refill: 2 tokens and 5/6.
  const std::int64_t ahead = now_ms() + kHour;
  const std::int64_t window = 60000;
  set_meta({"rate_max", "100", "rate_window_ms", std::to_string(window), "rate_credit",
            std::to_string(2 * window + 50000), "rate_at", std::to_string(ahead)});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 2u);
  EXPECT_EQ(meta_int("rate_credit"), 50000);
  const std::int64_t at = meta_int("rate_at");
  EXPECT_LT(at, ahead) << "rate_at follows the server's clock back";
  EXPECT_GE(at, ahead - kHour);
}

TEST_F(ClaimLimits, WithoutAWholeTokenItClaimsNothingButStillWritesTheBucket) {
  enqueue_many(2);
  set_meta({"rate_max", "1", "rate_window_ms", std::to_string(kHour), "rate_credit", std::to_string(kHour - 100000),
            "rate_at", std::to_string(now_ms() + kHour)});
  EXPECT_EQ(claimed_by(claim_call_of(5)), 0u);
  EXPECT_EQ(meta_int("rate_credit"), kHour - 100000);
  EXPECT_LE(meta_int("rate_at"), now_ms());
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_FALSE(hash(q.stats).count("claimed")) << "nothing claimed, nothing counted";
}

TEST_F(ClaimLimits, SkippedRowsSpendNoTokens) {
  std::string gone = enqueue_new("gone");
  std::string bad = enqueue_new("bad");
  std::string good = enqueue_new("good");
  cmd({"DEL", q.row_root + gone});
  cmd({"HSET", q.row_root + bad, "attempts", "x"});
  set_meta(
      {"rate_max", "5", "rate_window_ms", "1000", "rate_credit", "2000", "rate_at", std::to_string(now_ms() + kHour)});
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 2, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, good);
  EXPECT_EQ(meta_int("rate_credit"), 1000) << "two tokens, one job claimed";
}

TEST_F(ClaimLimits, TheLeastOfMaxCountMaxActiveAndTheTokensIsClaimed) {
  enqueue_many(12);
  const std::string future = std::to_string(now_ms() + kHour);
  set_meta({"max_active", "6", "rate_max", "10", "rate_window_ms", "1000", "rate_credit", "4000", "rate_at", future});
  EXPECT_EQ(claimed_by(claim_call_of(3)), 3u) << "max_count";
  EXPECT_EQ(meta_int("rate_credit"), 1000);
  set_meta({"rate_credit", "10000", "rate_at", future});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u) << "max_active: 6 less 3 active";
  EXPECT_EQ(meta_int("rate_credit"), 7000);
  set_meta({"max_active", "100", "rate_credit", "2500", "rate_at", future});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 2u) << "tokens";
  EXPECT_EQ(meta_int("rate_credit"), 500);
  EXPECT_EQ(zset(q.active).size(), 8u);
}

TEST_F(ClaimLimits, ALeftoverBucketWithoutARateIsNoLimit) {
  enqueue_many(3);
  set_meta({"rate_credit", "not even a number", "rate_at", "-"});
  auto before = hash(q.meta);
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u);
  EXPECT_EQ(hash(q.meta), before) << "no rate: the bucket is neither read nor written";
}

TEST_F(ClaimLimits, APausedQueueWithLimitsChangesNothing) {
  enqueue_many(2);
  enqueue_new("due", {0, now_ms() - 1});
  set_meta({"paused", "1", "max_active", "5", "rate_max", "5", "rate_window_ms", "1000"});
  auto before = snapshot();
  EXPECT_EQ(claimed_by(claim_call_of(10, 10)), 0u);
  EXPECT_EQ(snapshot(), before) << "no bucket written while paused";
  // Even a broken limit: the paused check comes first.
  set_meta({"max_active", "zero"});
  before = snapshot();
  EXPECT_EQ(claimed_by(claim_call_of(10, 10)), 0u);
  EXPECT_EQ(snapshot(), before);
}

// A broken limit must stop the queue, never lift the limit: EMQARG naming
// the field, before anything (a promotion, a pop, the bucket) is written.
TEST_F(ClaimLimits, ABrokenLimitFieldIsRefusedByNameBeforeAnyWrite) {
  enqueue_many(2);
  enqueue_new("due", {0, now_ms() - 1});
  struct Broken {
    std::vector<std::string> meta;  // the whole limit part of meta
    std::string says;
  };
  const std::string ok_at = std::to_string(now_ms());
  const std::vector<Broken> cases = {
      {{"max_active", "0"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", "1000001"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", "-3"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", "2.5"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", "007"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", ""}, "max_active must be an integer in 1..1000000"},
      {{"max_active", " 5"}, "max_active must be an integer in 1..1000000"},
      {{"max_active", std::string(400, '9')}, "max_active must be an integer in 1..1000000"},
      {{"rate_max", "0", "rate_window_ms", "1000"}, "rate_max must be an integer in 1..1000000"},
      {{"rate_max", "abc", "rate_window_ms", "1000"}, "rate_max must be an integer in 1..1000000"},
      {{"rate_max", "10", "rate_window_ms", "86400001"}, "rate_window_ms must be an integer in 1..86400000"},
      {{"rate_max", "10", "rate_window_ms", "1e3"}, "rate_window_ms must be an integer in 1..86400000"},
      {{"rate_max", "10"}, "rate_window_ms must be set with rate_max"},
      {{"rate_window_ms", "1000"}, "rate_max must be set with rate_window_ms"},
      {{"rate_max", "10", "rate_window_ms", "1000", "rate_credit", "x", "rate_at", ok_at},
       "rate_credit must be an integer in 0..86400000000000"},
      {{"rate_max", "10", "rate_window_ms", "1000", "rate_credit", "-1", "rate_at", ok_at},
       "rate_credit must be an integer in 0..86400000000000"},
      {{"rate_max", "10", "rate_window_ms", "1000", "rate_credit", "86400000000001", "rate_at", ok_at},
       "rate_credit must be an integer in 0..86400000000000"},
      {{"rate_max", "10", "rate_window_ms", "1000", "rate_credit", "5", "rate_at", "soon"},
       "rate_at must be an integer in 0..1000000000000000"},
      {{"rate_max", "10", "rate_window_ms", "1000", "rate_credit", "5", "rate_at", "-1"},
       "rate_at must be an integer in 0..1000000000000000"},
      // A broken max_active is named even when the rate is fine, and first.
      {{"max_active", "none", "rate_max", "0", "rate_window_ms", "1000"}, "max_active must be an integer"},
  };
  for (const Broken& b : cases) {
    cmd({"DEL", q.meta});
    set_meta(b.meta);
    auto before = snapshot();
    WireError e = eval_error(claim_call_of(10, 10));
    EXPECT_EQ(e.kind, ErrorKind::Arg) << e.message;
    EXPECT_NE(e.message.find("EMQARG " + q.meta + " " + b.says), std::string::npos)
        << "got: " << e.message << "\nwanted: EMQARG " << q.meta << " " << b.says;
    EXPECT_EQ(snapshot(), before) << "refused, yet written: " << e.message;
  }
  // Mended, the queue claims again, up to the limit.
  cmd({"DEL", q.meta});
  set_meta({"max_active", "2"});
  EXPECT_EQ(claimed_by(claim_call_of(10, 10)), 2u);
}

TEST_F(ClaimLimits, TheRangesEdgesAreAccepted) {
  enqueue_many(3);
  set_meta({"max_active", "1000000", "rate_max", "1000000", "rate_window_ms", "86400000", "rate_credit",
            "86400000000000", "rate_at", "0"});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 3u);
  EXPECT_EQ(meta_int("rate_credit"), 86400000000000 - 3 * 86400000);
  set_meta(
      {"max_active", "1", "rate_max", "1", "rate_window_ms", "1", "rate_credit", "0", "rate_at", "1000000000000000"});
  EXPECT_EQ(claimed_by(claim_call_of(10)), 0u) << "max_active 1, three active";
}

// What tools show (limit_status, lib/limits.h: emq limit, emq web's "held
// back") against what claim does with the same fields: the tokens it
// counts are the ones claim takes, and "held back" is said exactly when a
// claim with jobs pending takes none. The bucket's rate_at lies ahead of
// the server's clock, so no refill moves it between the reading and the
// claim.
TEST_F(ClaimLimits, LimitStatusCountsAsClaimDoes) {
  const std::int64_t window = 1000, ahead = x.server_time_ms() + kHour;
  for (const std::int64_t tokens_x_window : {0L, window - 1, window, 3 * window, 7 * window + 5}) {
    for (const std::int64_t max_active : {0L, 2L, 3L}) {  // 0: none
      for (const std::string& id : members(q.active)) cmd({"DEL", q.row(id)});
      for (const std::string& id : members(q.pending)) cmd({"DEL", q.row(id)});
      cmd({"DEL", q.active, q.pending, q.meta});
      enqueue_many(8);
      ASSERT_EQ(claimed_by(claim_call_of(2)), 2u) << "two active before the limits";
      set_meta({"rate_max", "5", "rate_window_ms", std::to_string(window), "rate_credit",
                std::to_string(tokens_x_window), "rate_at", std::to_string(ahead)});
      if (max_active > 0) set_meta({"max_active", std::to_string(max_active)});

      std::vector<Reply> r = x.pipeline({limit_fields_read(q), {"ZCARD", q.active}});
      const LimitStatus s = limit_status(decode_limit_fields(r[0]), r[1].integer, x.server_time_ms());
      ASSERT_TRUE(s.limits && s.tokens) << s.broken;
      EXPECT_EQ(*s.tokens, std::min<std::int64_t>(5, tokens_x_window / window)) << "at most rate_max";
      const std::size_t claimed = claimed_by(claim_call_of(10));
      std::int64_t expected = std::min<std::int64_t>(6, *s.tokens);
      if (max_active > 0) expected = std::min<std::int64_t>(expected, max_active - 2);
      const std::string at = "credit " + std::to_string(tokens_x_window) + ", max_active " +
                             std::to_string(max_active) + ": " + s.held_back;
      EXPECT_EQ(static_cast<std::int64_t>(claimed), expected) << at;
      EXPECT_EQ(s.held_back.empty(), claimed > 0) << at;
    }
  }
}

}  // namespace
}  // namespace echomq::test
