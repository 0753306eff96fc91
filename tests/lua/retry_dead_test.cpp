// retry_dead: dead jobs back to pending, oldest death first, attempts reset
// to 0, their failure history kept.
#include <algorithm>

#include "wire_fixture.h"

namespace echomq::test {
namespace {

class RetryDead : public WireTest {
 protected:
  ScriptCall retry_call(const std::string& limit) {
    return {Script::RetryDead, {q.dead, q.pending, q.row_root}, {limit}};
  }
};

TEST_F(RetryDead, MovesADeadJobBackToPendingAtItsLaneWithAttemptsReset) {
  std::string id = enqueue_new("work", {6, std::nullopt});
  Lease l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"first", 2, 0, false}), FailResult::Retry);
  l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"second", 2, 0, false}), FailResult::Dead);
  auto stats_before = hash(q.stats);

  Reply r = raw(retry_call("10"));
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "0"},
                          {"payload", "work"},
                          {"lane", "6"},
                          {"lease_epoch", "2"},
                          {"failures", "2"},
                          {"error", "second"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 6}}));
  EXPECT_EQ(zset(q.dead), ZSet{});
  EXPECT_EQ(hash(q.stats), stats_before) << "retry_dead counts nothing";

  // A fresh start: the next claim is attempt 1 again, under a new epoch.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].attempt, 1);
  EXPECT_EQ(jobs[0].lease_epoch, 3);
}

TEST_F(RetryDead, TakesTheOldestDeathsFirstUpToLimit) {
  std::string a = make_dead(), b = make_dead(), c = make_dead();
  // Date the deaths apart (b oldest, then c, then a) so the order is the
  // dead score's, not the ids'.
  std::int64_t now = now_ms();
  cmd({"ZADD", q.dead, "XX", std::to_string(now - 3000), b});
  cmd({"ZADD", q.dead, "XX", std::to_string(now - 2000), c});
  cmd({"ZADD", q.dead, "XX", std::to_string(now - 1000), a});

  EXPECT_EQ(retry_dead(x, q, 2).moved, 2);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{a}));
  std::vector<std::string> back = members(q.pending);
  std::sort(back.begin(), back.end());
  std::vector<std::string> want{b, c};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(back, want);
  EXPECT_EQ(row(a).at("state"), "dead");
  EXPECT_EQ(retry_dead(x, q, 2).moved, 1);
  EXPECT_EQ(retry_dead(x, q, 2).moved, 0);
}

TEST_F(RetryDead, DropsDeadIdsWhoseRowIsGone) {
  std::string gone = make_dead();
  std::string kept = make_dead();
  cmd({"DEL", q.row_root + gone});
  EXPECT_EQ(retry_dead(x, q, 10).moved, 1);
  EXPECT_EQ(zset(q.dead), ZSet{});
  EXPECT_EQ(zset(q.pending), (ZSet{{kept, 0}}));
  EXPECT_FALSE(exists(q.row_root + gone));
}

}  // namespace
}  // namespace echomq::test
