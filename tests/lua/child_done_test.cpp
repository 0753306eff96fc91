// child_done: every reply (0 not in deps, 1 more awaited, 2 released, 3 dead
// under fail, 4 dead under wait, 5 parent not waiting), each policy, the
// repeat that changes nothing, and refusals that write nothing.
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class ChildDone : public FlowTest {
 protected:
  // A parent in q waiting for two children of queue "c" (not enqueued: only
  // their refs matter here).
  void SetUp() override {
    FlowTest::SetUp();
    a = cq.ref(mint_job_id());
    b = cq.ref(mint_job_id());
  }
  std::string waiting_parent(const std::string& policy, const std::string& lane = "0",
                             const std::string& grandparent = "") {
    std::string id = mint_job_id();
    EXPECT_EQ(integer(enqueue_parent_call(q, id, {a, b}, policy, grandparent, lane)), 1);
    return id;
  }
  std::int64_t done(const std::string& parent, const std::string& ref, const std::string& outcome,
                    const std::string& text, bool with_outbox = true) {
    return integer(child_done_call(q, parent, ref, outcome, text, with_outbox));
  }

  QueueKeys cq = queue("c");
  std::string a, b;
};

TEST_F(ChildDone, ACompletedChildIsRecordedAndTheParentWaitsForTheRest) {
  std::string p = waiting_parent("fail");
  EXPECT_EQ(done(p, a, "completed", "result a"), 1);
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "c:result a"}}));
  EXPECT_EQ(set_members(q.deps(p)), (std::vector<std::string>{b}));
  EXPECT_EQ(row(p).at("state"), "waiting");
  EXPECT_EQ(members(q.waiting), (std::vector<std::string>{p}));
}

TEST_F(ChildDone, TheLastChildReleasesTheParentToPendingAtItsLane) {
  std::string p = waiting_parent("fail", "-7");
  ASSERT_EQ(done(p, a, "completed", "result a"), 1);
  EXPECT_EQ(done(p, b, "completed", ""), 2);
  EXPECT_EQ(row(p).at("state"), "pending");
  EXPECT_EQ(zset(q.pending), (ZSet{{p, -7}}));
  EXPECT_TRUE(zset(q.waiting).empty());
  EXPECT_FALSE(exists(q.deps(p)));
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "c:result a"}, {b, "c:"}}));
  EXPECT_EQ(claim_one(p).id, p);
}

TEST_F(ChildDone, TellingTwiceChangesNothingTheSecondTime) {
  std::string p = waiting_parent("fail");
  ASSERT_EQ(done(p, a, "completed", "result a"), 1);
  auto before = snapshot();
  EXPECT_EQ(done(p, a, "completed", "result a"), 0);
  EXPECT_EQ(done(p, a, "dead", "a later death of a re-run"), 0);
  EXPECT_EQ(snapshot(), before);
  ASSERT_EQ(done(p, b, "completed", "result b"), 2);
  before = snapshot();
  EXPECT_EQ(done(p, b, "completed", "result b"), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ChildDone, ARefThatIsNotAChildChangesNothing) {
  std::string p = waiting_parent("fail");
  auto before = snapshot();
  EXPECT_EQ(done(p, cq.ref(mint_job_id()), "completed", "stranger"), 0);
  EXPECT_EQ(done(mint_job_id(), a, "completed", "no such parent"), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ChildDone, ADeadChildUnderIgnoreCountsAsFinished) {
  std::string p = waiting_parent("ignore");
  EXPECT_EQ(done(p, a, "dead", "boom"), 1);
  EXPECT_EQ(done(p, b, "completed", "ok"), 2);
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "d:boom"}, {b, "c:ok"}}));
  EXPECT_EQ(row(p).at("state"), "pending");
}

TEST_F(ChildDone, ADeadChildUnderFailKillsTheParent) {
  std::string p = waiting_parent("fail");
  std::int64_t before = now_ms();
  EXPECT_EQ(done(p, a, "dead", "boom"), 3);
  Row parent = row(p);
  EXPECT_EQ(parent.at("state"), "dead");
  EXPECT_EQ(parent.at("error"), "child " + a + " died: boom");
  EXPECT_EQ(parent.count("failures"), 0u) << "the parent never ran";
  EXPECT_TRUE(zset(q.waiting).empty());
  EXPECT_GE(score(q.dead, p), before);
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "d:boom"}}));
  EXPECT_EQ(set_members(q.deps(p)), (std::vector<std::string>{b}));
  EXPECT_FALSE(exists(q.outbox)) << "a root parent has no one to tell";
  // The other child still finishes: recorded, and it leaves deps (5).
  EXPECT_EQ(done(p, b, "completed", "late"), 5);
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "d:boom"}, {b, "c:late"}}));
  EXPECT_FALSE(exists(q.deps(p)));
  EXPECT_EQ(row(p).at("state"), "dead");
}

TEST_F(ChildDone, AParentWithoutAPolicyFieldFollowsFail) {
  std::string p = waiting_parent("wait");
  cmd({"HDEL", q.row(p), "on_child_failure"});
  EXPECT_EQ(done(p, a, "dead", "boom"), 3);
}

TEST_F(ChildDone, TheDeathErrorKeepsItsFirst4096Bytes) {
  std::string p = waiting_parent("fail");
  EXPECT_EQ(done(p, a, "dead", std::string(5000, 'e')), 3);
  EXPECT_EQ(row(p).at("error").size(), 4096u);
  EXPECT_EQ(hash(q.results(p)).at(a).size(), 5002u) << "results keep the whole text";
}

TEST_F(ChildDone, AParentThatIsAChildAndDiesGoesToItsOutboxWhenGivenOne) {
  std::string p = waiting_parent("fail", "0", "grand:JOB_g");
  std::int64_t before = now_ms();
  EXPECT_EQ(done(p, a, "dead", "boom"), 3);
  EXPECT_EQ(members(q.outbox), (std::vector<std::string>{p}));
  EXPECT_GE(score(q.outbox, p), before);
}

TEST_F(ChildDone, WithoutTheOutboxKeyADyingParentIsNotAddedToIt) {
  std::string p = waiting_parent("fail", "0", "grand:JOB_g");
  EXPECT_EQ(done(p, a, "dead", "boom", false), 3);
  EXPECT_EQ(row(p).at("state"), "dead");
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(ChildDone, ADeadChildUnderWaitStaysAwaitedUntilItCompletes) {
  std::string p = waiting_parent("wait");
  ASSERT_EQ(done(p, b, "completed", "b"), 1);
  EXPECT_EQ(done(p, a, "dead", "boom"), 4);
  EXPECT_EQ(set_members(q.deps(p)), (std::vector<std::string>{a}));
  EXPECT_EQ(row(p).at("state"), "waiting");
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "d:boom"}, {b, "c:b"}}));
  auto before = snapshot();
  EXPECT_EQ(done(p, a, "dead", "boom"), 4) << "told twice";
  EXPECT_EQ(snapshot(), before);
  // Retried from dead and completed: the parent is released.
  EXPECT_EQ(done(p, a, "completed", "at last"), 2);
  EXPECT_EQ(hash(q.results(p)), (Row{{a, "c:at last"}, {b, "c:b"}}));
  EXPECT_EQ(row(p).at("state"), "pending");
}

TEST_F(ChildDone, AParentThatIsNotWaitingOnlyRecords) {
  std::string p = waiting_parent("wait");
  // An operator moved it (here: straight to pending, as a retry would).
  cmd({"ZREM", q.waiting, p});
  cmd({"HSET", q.row(p), "state", "pending"});
  cmd({"ZADD", q.pending, "0", p});
  auto before = snapshot();
  EXPECT_EQ(done(p, a, "dead", "boom"), 5);
  before[q.results(p)] = "hash: " + a + "=d:boom";
  before[q.deps(p)] = "set: " + b;
  EXPECT_EQ(snapshot(), before);
}

// Issue 37, row 13: the results key of a parent deleted by hand leaked,
// and its id stayed in waiting for ever.
TEST_F(ChildDone, AParentWhoseRowIsGoneRecordsNothingAndLeavesNothing) {
  std::string p = waiting_parent("fail");
  cmd({"HSET", q.results(p), "old:JOB_x", "c:earlier"});
  cmd({"DEL", q.row(p)});
  EXPECT_EQ(done(p, a, "completed", "orphan"), 0);
  EXPECT_FALSE(exists(q.results(p)));
  EXPECT_FALSE(exists(q.deps(p)));
  EXPECT_TRUE(zset(q.waiting).empty());
  EXPECT_TRUE(zset(q.pending).empty());
  EXPECT_EQ(done(p, b, "completed", "late"), 0) << "its other child: nothing left to change";
  for (const auto& [key, text] : snapshot()) EXPECT_EQ(key, q.meta) << key << " is left: " << text;
}

TEST_F(ChildDone, AMalformedParentRowIsRefusedAndNothingChanges) {
  struct Case {
    std::vector<std::string> corrupt;
    std::string says;
  };
  const std::vector<Case> cases{
      {{"HSET", "", "lane", "nan"}, "lane is not an integer in -1000..1000"},
      {{"HSET", "", "lane", "1001"}, "lane is not an integer in -1000..1000"},
      {{"HSET", "", "on_child_failure", "sometimes"}, "on_child_failure is not fail, wait or ignore"},
      {{"HSET", "", "lane", "-nan"}, "lane is not an integer in -1000..1000"},
  };
  for (const Case& c : cases) {
    std::string p = waiting_parent("ignore");
    std::vector<std::string> corrupt = c.corrupt;
    corrupt[1] = q.row(p);
    cmd(corrupt);
    auto before = snapshot();
    WireError e = eval_error(child_done_call(q, p, a, "completed", "ok"));
    EXPECT_NE(e.message.find("EMQROW " + q.row(p) + " " + c.says + "; nothing was written"), std::string::npos)
        << e.message;
    EXPECT_EQ(snapshot(), before) << c.says;
  }
  std::string p = waiting_parent("fail");
  cmd({"DEL", q.row(p)});
  cmd({"SET", q.row(p), "not a hash"});
  auto before = snapshot();
  WireError e = eval_error(child_done_call(q, p, a, "completed", "ok"));
  EXPECT_NE(e.message.find("WRONGTYPE"), std::string::npos) << e.message;
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ChildDone, RefusesMalformedArgumentsAndChangesNothing) {
  std::string p = waiting_parent("fail");
  auto before = snapshot();
  ScriptCall not_a_row = child_done_call(q, p, a, "completed", "");
  not_a_row.keys[0] = q.pending;
  expect_arg_errors({
      {child_done_call(q, p, "c-JOB_1", "completed", ""), "child ref must be <queue>:<id> with a JOB id"},
      {child_done_call(q, p, "c:TASK_1", "completed", ""), "child ref must be <queue>:<id> with a JOB id"},
      {child_done_call(q, p, a, "finished", ""), "outcome must be completed or dead"},
      {child_done_call(q, p, a, "", ""), "outcome must be completed or dead"},
      {not_a_row, "KEYS[1] must be a row key emq:{q}:job:<id>"},
  });
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
