// reap: leases past their deadline come back to pending, or go dead when
// their attempts are spent; each counts a failure, "lease expired".
#include "wire_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::seconds;

class Reap : public WireTest {
 protected:
  // Reaps until `jobs` have come back, adding up the replies.
  ReapResult reap_until(std::int64_t jobs, std::int64_t max_attempts) {
    ReapResult total;
    bool done = wait_for(
        [&] {
          ReapResult r = reap(x, q, max_attempts, 100);
          total.requeued += r.requeued;
          total.dead += r.dead;
          return total.requeued + total.dead >= jobs;
        },
        seconds(5));
    EXPECT_TRUE(done) << "reap did not return " << jobs << " job(s) within 5 s";
    return total;
  }
  // Waits until every deadline in the active set is in the server's past.
  void wait_all_expired() {
    ZSet active = zset(q.active);
    ASSERT_FALSE(active.empty());
    std::int64_t last = active.back().second;
    ASSERT_TRUE(wait_for([&] { return now_ms() > last; }, seconds(5)));
  }
};

TEST_F(Reap, RequeuesAnExpiredLeaseAtItsLaneCountingAFailure) {
  std::string id = enqueue_new("work", {3, std::nullopt});
  claim_one(id, 50);
  ReapResult r = reap_until(1, 5);
  EXPECT_EQ(r.requeued, 1);
  EXPECT_EQ(r.dead, 0);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "1"},
                          {"payload", "work"},
                          {"lane", "3"},
                          {"lease_epoch", "1"},
                          {"failures", "1"},
                          {"error", "lease expired"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 3}}));
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"reaped", 1}}));

  // And it is claimed again, as a new attempt under a new epoch.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].attempt, 2);
  EXPECT_EQ(jobs[0].lease_epoch, 2);
}

TEST_F(Reap, SendsAJobWhoseAttemptsAreSpentToDead) {
  std::string id = enqueue_new("work");
  claim_one(id, 50);
  std::int64_t before = now_ms();
  ReapResult r = reap_until(1, 1);
  std::int64_t after = now_ms();
  EXPECT_EQ(r.requeued, 0);
  EXPECT_EQ(r.dead, 1);
  EXPECT_EQ(row(id), (Row{{"state", "dead"},
                          {"attempts", "1"},
                          {"payload", "work"},
                          {"lease_epoch", "1"},
                          {"failures", "1"},
                          {"error", "lease expired"}}));
  std::int64_t died = score(q.dead, id);
  EXPECT_GE(died, before);
  EXPECT_LE(died, after);
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"reaped", 1}, {"dead", 1}}));
}

TEST_F(Reap, RepliesRequeuedAndDeadCountsAsIntegers) {
  Lease young = make_active("young", 50);  // attempts 1 of 2
  std::string old_id = enqueue_new("old");
  Lease old = claim_one(old_id);
  ASSERT_EQ(fail(x, q, old, {"x", 5, 0, false}), FailResult::Retry);
  claim_one(old_id, 50);  // attempts 2 of 2
  wait_all_expired();
  Reply r = raw({Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root}, {"2", "100"}});
  ASSERT_EQ(r.type, Reply::Type::Array);
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[0].type, Reply::Type::Integer);
  EXPECT_EQ(r.elements[0].integer, 1);  // requeued
  EXPECT_EQ(r.elements[1].type, Reply::Type::Integer);
  EXPECT_EQ(r.elements[1].integer, 1);  // dead
  EXPECT_EQ(row(young.id).at("state"), "pending");
  EXPECT_EQ(row(old_id).at("state"), "dead");
}

TEST_F(Reap, LeavesLeasesThatHaveNotExpiredAlone) {
  Lease held = make_active("held", 600000);
  std::int64_t deadline = score(q.active, held.id);
  Lease lapsed = make_active("lapsed", 50);
  ReapResult r = reap_until(1, 5);
  EXPECT_EQ(r.requeued, 1);
  EXPECT_EQ(zset(q.active), (ZSet{{held.id, deadline}}));
  EXPECT_EQ(row(held.id).at("state"), "active");
  EXPECT_EQ(row(held.id).count("failures"), 0u);
  EXPECT_EQ(row(lapsed.id).at("state"), "pending");
}

TEST_F(Reap, LooksAtNoMoreThanLimitIds) {
  for (int i = 0; i < 3; ++i) make_active("p", 50);
  wait_all_expired();
  ReapResult first = reap(x, q, 5, 2);
  EXPECT_EQ(first.requeued, 2);
  EXPECT_EQ(zset(q.active).size(), 1u);
  ReapResult second = reap(x, q, 5, 2);
  EXPECT_EQ(second.requeued, 1);
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(counters()["reaped"], 3);
}

TEST_F(Reap, DropsIdsWhoseRowIsGone) {
  Lease l = make_active("p", 50);
  cmd({"DEL", q.row_root + l.id});
  wait_all_expired();
  ReapResult r = reap(x, q, 5, 100);
  EXPECT_EQ(r.requeued, 0);
  EXPECT_EQ(r.dead, 0);
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_FALSE(exists(q.row_root + l.id)) << "reap must not resurrect a row";
  EXPECT_EQ(counters()["reaped"], 0);
}

TEST_F(Reap, NothingExpiredRepliesZeroesAndWritesNothing) {
  make_active("p", 600000);
  auto before = snapshot();
  ReapResult r = reap(x, q, 5, 100);
  EXPECT_EQ(r.requeued, 0);
  EXPECT_EQ(r.dead, 0);
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
