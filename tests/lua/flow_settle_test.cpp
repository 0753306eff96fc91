// complete_flow and fail_flow: as complete and fail, plus a child's row kept
// and its id in the outbox, a parent's deps and results deleted when it
// completes, and the outbox written on dead only.
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class SettleFlow : public FlowTest {
 protected:
  // A root parent in q whose one child (in queue "c") completed with
  // `result` and was delivered: the parent is pending, its results hold it.
  std::string released_parent(const std::string& result) {
    std::string p = parent_of(q, {cq.ref(child)});
    child_of(cq, q.ref(p), child);
    EXPECT_EQ(integer(complete_flow_call(cq, claim_from(cq, child), 0, result)), 1);
    EXPECT_EQ(drain(cq), (std::vector<std::int64_t>{2}));
    EXPECT_EQ(hash(q.results(p)), (Row{{cq.ref(child), "c:" + result}}));
    return p;
  }

  QueueKeys cq = queue("c");
  std::string child = mint_job_id();
};
class CompleteFlow : public SettleFlow {};
class FailFlow : public SettleFlow {};

TEST_F(CompleteFlow, KeepsAChildWithoutExpiryAndPutsItInTheOutbox) {
  for (std::int64_t keep_ms : {0, 600000}) {
    std::string id = child_of(q, "parents:JOB_p");
    Lease l = claim_one(id);
    std::int64_t before = now_ms();
    EXPECT_EQ(integer(complete_flow_call(q, l, keep_ms, "thumb.png")), 1);
    Row r = row(id);
    EXPECT_EQ(r.at("state"), "completed") << keep_ms;
    EXPECT_EQ(r.at("result"), "thumb.png");
    EXPECT_EQ(r.at("parent"), "parents:JOB_p");
    EXPECT_EQ(pttl(q.row(id)), -1) << "kept whatever keep_ms (" << keep_ms << ") until the parent is told";
    EXPECT_GE(score(q.outbox, id), before);
    EXPECT_TRUE(zset(q.active).empty());
  }
  EXPECT_EQ(counters(), counters_with({{"claimed", 2}, {"completed", 2}}));
}

TEST_F(CompleteFlow, AJobOfNoFlowIsCompletedAsCompleteDoes) {
  Lease gone = make_active();
  EXPECT_EQ(integer(complete_flow_call(q, gone, 0, "r")), 1);
  EXPECT_FALSE(exists(q.row(gone.id)));
  Lease kept = make_active();
  EXPECT_EQ(integer(complete_flow_call(q, kept, 600000, "r")), 1);
  EXPECT_EQ(row(kept.id).at("state"), "completed");
  EXPECT_GT(pttl(q.row(kept.id)), 0);
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(CompleteFlow, AParentThatRanLosesItsDepsAndResults) {
  std::string p = released_parent("child result");
  Lease l = claim_one(p);
  cmd({"SADD", q.deps(p), "left:JOB_over"});  // whatever a retry left behind
  EXPECT_EQ(integer(complete_flow_call(q, l, 0, "sheet.pdf")), 1);
  EXPECT_FALSE(exists(q.row(p)));
  EXPECT_FALSE(exists(q.deps(p)));
  EXPECT_FALSE(exists(q.results(p)));
  EXPECT_FALSE(exists(q.outbox)) << "a root parent tells no one";
}

TEST_F(CompleteFlow, ALostLeaseChangesNothing) {
  std::string id = child_of(q, "parents:JOB_p");
  Lease l = claim_one(id);
  auto before = snapshot();
  EXPECT_EQ(integer(complete_flow_call(q, {id, l.epoch + 1}, 0, "late")), 0);
  EXPECT_EQ(snapshot(), before);
  ASSERT_EQ(integer(complete_flow_call(q, l, 0, "first")), 1);
  before = snapshot();
  EXPECT_EQ(integer(complete_flow_call(q, l, 0, "second run")), 0) << "completed twice counts once";
  EXPECT_EQ(snapshot(), before);
}

TEST_F(CompleteFlow, ABrokenCounterIsSkippedAndTheJobSettledAllTheSame) {
  std::string id = child_of(q, "parents:JOB_p");
  Lease l = claim_one(id);
  cmd({"HSET", q.stats, "completed", "many"});
  EXPECT_EQ(integer(complete_flow_call(q, l, 0, "r")), 1);
  EXPECT_EQ(row(id).at("state"), "completed");
  EXPECT_EQ(members(q.outbox), (std::vector<std::string>{id}));
  EXPECT_EQ(hash(q.stats).at("completed"), "many");
}

TEST_F(CompleteFlow, RefusesMalformedArgumentsAndChangesNothing) {
  std::string id = child_of(q, "parents:JOB_p");
  Lease l = claim_one(id);
  auto before = snapshot();
  ScriptCall kind = complete_flow_call(q, l, 0, "");
  kind.keys[0] = q.row_root + "TASK_1";  // the row of the id: EMQ.COMPLETE_FLOW checks that first
  kind.args[0] = "TASK_1";
  EXPECT_EQ(eval_error(kind).kind, ErrorKind::Kind);
  for (const std::string& keep : {std::string("-1"), std::string("x"), std::string(16, '1')}) {
    ScriptCall c = complete_flow_call(q, l, 0, "");
    c.args[2] = keep;
    WireError e = eval_error(c);
    EXPECT_NE(e.message.find("EMQARG keep_ms must be an integer in 0..1000000000000"), std::string::npos) << e.message;
  }
  EXPECT_EQ(snapshot(), before);
}

TEST_F(FailFlow, ARetriedChildIsNoNews) {
  std::string id = mint_job_id();
  ASSERT_EQ(integer(enqueue_child_call(q, id, "parents:JOB_p", "6")), 1);
  EXPECT_EQ(integer(fail_flow_call(q, claim_one(id), "flaky", 5, 0, false)), 1);
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 6}}));
  EXPECT_EQ(row(id).at("state"), "pending");
  EXPECT_EQ(integer(fail_flow_call(q, claim_one(id), "flaky", 5, 60000, false)), 1);
  EXPECT_EQ(row(id).at("state"), "delayed");
  EXPECT_EQ(members(q.delayed), (std::vector<std::string>{id}));
  EXPECT_FALSE(exists(q.outbox));
  EXPECT_EQ(row(id).at("failures"), "2");
  EXPECT_EQ(counters(), counters_with({{"claimed", 2}, {"retried", 2}}));
}

TEST_F(FailFlow, ADeadChildGoesToTheOutbox) {
  std::string permanent = child_of(q, "parents:JOB_p");
  std::int64_t before = now_ms();
  EXPECT_EQ(integer(fail_flow_call(q, claim_one(permanent), "bad input", 5, 0, true)), 2);
  std::string spent = child_of(q, "parents:JOB_p");
  EXPECT_EQ(integer(fail_flow_call(q, claim_one(spent), "again", 1, 0, false)), 2);
  for (const std::string& id : {permanent, spent}) {
    EXPECT_EQ(row(id).at("state"), "dead");
    EXPECT_GE(score(q.dead, id), before);
    EXPECT_GE(score(q.outbox, id), before);
  }
  EXPECT_EQ(row(permanent).at("error"), "bad input");
  EXPECT_EQ(counters(), counters_with({{"claimed", 2}, {"dead", 2}}));
}

TEST_F(FailFlow, ADeadJobOfNoFlowStaysOutOfTheOutbox) {
  Lease l = make_active();
  EXPECT_EQ(integer(fail_flow_call(q, l, "bad", 5, 0, true)), 2);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{l.id}));
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(FailFlow, ADeadParentKeepsItsResultsForARetry) {
  std::string p = released_parent("r");
  EXPECT_EQ(integer(fail_flow_call(q, claim_one(p), "no", 5, 0, true)), 2);
  EXPECT_EQ(hash(q.results(p)), (Row{{cq.ref(child), "c:r"}}));
}

TEST_F(FailFlow, ALostLeaseChangesNothing) {
  std::string id = child_of(q, "parents:JOB_p");
  Lease l = claim_one(id);
  auto before = snapshot();
  EXPECT_EQ(integer(fail_flow_call(q, {id, l.epoch + 1}, "late", 5, 0, true)), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(FailFlow, AMalformedRowIsRefusedAndTheJobStaysActive) {
  struct Case {
    std::string field, value, says;
  };
  const std::vector<Case> cases{{"lane", "nan", "lane is not an integer in -1000..1000"},
                                {"lane", "5000", "lane is not an integer in -1000..1000"},
                                {"attempts", "x", "attempts is not an integer counter"},
                                {"failures", "1.5", "failures is not an integer counter"}};
  for (const Case& c : cases) {
    std::string id = child_of(q, "parents:JOB_p");
    Lease l = claim_one(id);
    cmd({"HSET", q.row(id), c.field, c.value});
    auto before = snapshot();
    WireError e = eval_error(fail_flow_call(q, l, "boom", 5, 0, false));
    EXPECT_NE(e.message.find("EMQROW " + q.row(id) + " " + c.says + "; nothing was written"), std::string::npos)
        << e.message;
    EXPECT_EQ(snapshot(), before) << c.field << "=" << c.value;
    EXPECT_EQ(members(q.active), (std::vector<std::string>{id}));
    cmd({"DEL", q.row(id)});
    cmd({"ZREM", q.active, id});
  }
}

TEST_F(FailFlow, RefusesMalformedArgumentsAndChangesNothing) {
  std::string id = child_of(q, "parents:JOB_p");
  Lease l = claim_one(id);
  auto before = snapshot();
  struct Case {
    std::size_t arg;
    std::string value, says;
  };
  const std::vector<Case> cases{{3, "0", "max_attempts must be an integer in 1..1000000"},
                                {3, "x", "max_attempts must be an integer in 1..1000000"},
                                {4, "-1", "backoff_ms must be an integer in 0..1000000000000"},
                                {4, std::string(400, '9'), "backoff_ms must be an integer in 0..1000000000000"},
                                {5, "yes", "permanent must be 0 or 1"}};
  for (const Case& c : cases) {
    ScriptCall call = fail_flow_call(q, l, "boom", 5, 0, false);
    call.args[c.arg] = c.value;
    WireError e = eval_error(call);
    EXPECT_EQ(e.kind, ErrorKind::Arg) << e.message;
    EXPECT_NE(e.message.find("EMQARG " + c.says), std::string::npos) << e.message;
  }
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
