// promote_job: one delayed job to pending now, by id, its attempts and
// failure history kept; any job that is not delayed is left exactly as it is.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class PromoteJob : public WireTest {
 protected:
  Reply promote_raw(const std::string& id) {
    return raw({Script::PromoteJob, {q.row_root + id, q.delayed, q.pending}, {id}});
  }
};

TEST_F(PromoteJob, MovesARetryWaitingOutItsBackoffToPendingAtItsLaneNow) {
  std::string id = enqueue_new("work", {-4, std::nullopt});
  Lease l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"busy", 5, 3600000, false}), FailResult::Retry);
  ASSERT_EQ(members(q.delayed), (std::vector<std::string>{id}));
  std::string other = make_delayed();
  auto stats_before = hash(q.stats);

  Reply r = promote_raw(id);
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "1"},
                          {"payload", "work"},
                          {"lane", "-4"},
                          {"lease_epoch", "1"},
                          {"failures", "1"},
                          {"error", "busy"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, -4}}));
  EXPECT_EQ(members(q.delayed), (std::vector<std::string>{other})) << "only the named job moves";
  EXPECT_EQ(hash(q.stats), stats_before) << "promote_job counts nothing";

  // The next claim takes it at once, as its second attempt.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_EQ(jobs[0].attempt, 2);
}

TEST_F(PromoteJob, TheTypedCallSaysMovedThenNotDelayed) {
  std::string id = make_delayed();
  EXPECT_EQ(promote_job(x, q, id), PromoteJobResult::Moved);
  EXPECT_EQ(promote_job(x, q, id), PromoteJobResult::NotDelayed) << "a second promote finds it pending";
  EXPECT_EQ(row(id).at("state"), "pending");
}

TEST_F(PromoteJob, LeavesEveryJobThatIsNotDelayedAlone) {
  Lease active = make_active();
  std::string kept = make_completed_kept();
  std::string dead = make_dead();
  std::string pending = enqueue_new("pending");
  auto before = snapshot();
  for (const std::string& id : {pending, dead, active.id, kept, std::string("JOB_never_enqueued")}) {
    Reply r = promote_raw(id);
    EXPECT_EQ(r.type, Reply::Type::Integer) << id;
    EXPECT_EQ(r.integer, 0) << id;
  }
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(complete(x, q, active, 0, ""), CompleteResult::Completed) << "the running job's worker keeps its lease";
}

TEST_F(PromoteJob, DropsADelayedIdWhoseRowIsGone) {
  std::string gone = make_delayed();
  cmd({"DEL", q.row_root + gone});
  EXPECT_EQ(promote_raw(gone).integer, 0);
  EXPECT_TRUE(members(q.delayed).empty());
  EXPECT_TRUE(members(q.pending).empty());
}

TEST_F(PromoteJob, LeavesADelayedIdWhoseRowIsNotAHashForAnOperator) {
  std::string id = make_delayed();
  cmd({"DEL", q.row_root + id});
  cmd({"SET", q.row_root + id, "junk"});
  EXPECT_EQ(promote_raw(id).integer, 0);
  EXPECT_EQ(members(q.delayed), (std::vector<std::string>{id}));
  EXPECT_TRUE(members(q.pending).empty());
}

}  // namespace
}  // namespace echomq::test
