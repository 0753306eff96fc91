// retry_job: one dead job back to pending by id, attempts reset to 0, its
// failure history kept; any job that is not dead is left exactly as it is.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class RetryJob : public WireTest {
 protected:
  Reply retry_raw(const std::string& id) { return raw({Script::RetryJob, {q.row_root + id, q.dead, q.pending}, {id}}); }
};

TEST_F(RetryJob, MovesOneDeadJobBackToPendingAtItsLaneWithAttemptsReset) {
  std::string id = enqueue_new("work", {-4, std::nullopt});
  Lease l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"first", 2, 0, false}), FailResult::Retry);
  l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"second", 2, 0, false}), FailResult::Dead);
  std::string other = make_dead();
  auto stats_before = hash(q.stats);

  Reply r = retry_raw(id);
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "0"},
                          {"payload", "work"},
                          {"lane", "-4"},
                          {"lease_epoch", "2"},
                          {"failures", "2"},
                          {"error", "second"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, -4}}));
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{other})) << "only the named job moves";
  EXPECT_EQ(hash(q.stats), stats_before) << "retry_job counts nothing";

  // A fresh start: the next claim is attempt 1 again, under a new epoch.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_EQ(jobs[0].attempt, 1);
  EXPECT_EQ(jobs[0].lease_epoch, 3);
}

TEST_F(RetryJob, TheTypedCallSaysMovedThenNotDead) {
  std::string id = make_dead();
  EXPECT_EQ(retry_job(x, q, id), RetryJobResult::Moved);
  EXPECT_EQ(retry_job(x, q, id), RetryJobResult::NotDead) << "a second retry finds it pending";
  EXPECT_EQ(row(id).at("state"), "pending");
}

TEST_F(RetryJob, LeavesEveryJobThatIsNotDeadAlone) {
  Lease active = make_active();
  std::string kept = make_completed_kept();
  std::string delayed = make_delayed();
  std::string pending = enqueue_new("pending");
  auto before = snapshot();
  for (const std::string& id : {pending, delayed, active.id, kept, std::string("JOB_never_enqueued")}) {
    Reply r = retry_raw(id);
    EXPECT_EQ(r.type, Reply::Type::Integer) << id;
    EXPECT_EQ(r.integer, 0) << id;
  }
  EXPECT_EQ(snapshot(), before);
  // The running job's worker still holds its lease.
  EXPECT_EQ(complete(x, q, active, 0, ""), CompleteResult::Completed);
}

TEST_F(RetryJob, DropsADeadIdWhoseRowIsGone) {
  std::string gone = make_dead();
  cmd({"DEL", q.row_root + gone});
  EXPECT_EQ(retry_raw(gone).integer, 0);
  EXPECT_EQ(zset(q.dead), ZSet{});
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_FALSE(exists(q.row_root + gone)) << "no row is made up for it";
}

TEST_F(RetryJob, LeavesADeadIdWhoseRowIsNotAHashForAnOperator) {
  // Another writer made the row a string: HSET would fail half-way, after
  // the id had left dead. The script checks first and changes nothing.
  const std::string id = "JOB_broken";
  cmd({"SET", q.row_root + id, "not a row"});
  cmd({"ZADD", q.dead, "5", id});
  auto before = snapshot();
  EXPECT_EQ(retry_raw(id).integer, 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(RetryJob, ActsOnAnIdOfAnyShapePastTheWiresGate) {
  // An id a peer wrote, which the host-side check would refuse: listed
  // from the server, it must still be retried by id.
  const std::string odd = "JOB with spaces/and{braces}";
  cmd({"HSET", q.row_root + odd, "state", "dead", "attempts", "3", "payload", "p"});
  cmd({"ZADD", q.dead, "7", odd});
  EXPECT_EQ(retry_job(x, q, odd), RetryJobResult::Moved);
  EXPECT_EQ(zset(q.pending), (ZSet{{odd, 0}}));
  EXPECT_EQ(row(odd).at("state"), "pending");
}

}  // namespace
}  // namespace echomq::test
