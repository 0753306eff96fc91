// enqueue_parent and enqueue_child: the rows, sets and flag they write, the
// duplicate no-op, and every malformed argument refused with nothing written.
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class EnqueueParent : public FlowTest {};
class EnqueueChild : public FlowTest {};

TEST_F(EnqueueParent, WritesAWaitingParentItsDepsAndTheFlag) {
  QueueKeys cq = queue("c");
  std::string id = mint_job_id();
  std::vector<std::string> children = refs_of(cq, {mint_job_id(), mint_job_id()});
  std::int64_t before = now_ms();
  Reply r = raw(enqueue_parent_call(q, id, children, "wait", "grand:JOB_g", "-3"));
  ASSERT_EQ(r.type, Reply::Type::Integer) << r.str;
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "waiting"},
                          {"attempts", "0"},
                          {"payload", "parent payload"},
                          {"children", "2"},
                          {"on_child_failure", "wait"},
                          {"lane", "-3"},
                          {"parent", "grand:JOB_g"}}));
  std::vector<std::string> sorted = children;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(set_members(q.deps(id)), sorted);
  EXPECT_EQ(members(q.waiting), (std::vector<std::string>{id}));
  std::int64_t at = score(q.waiting, id);
  EXPECT_GE(at, before);
  EXPECT_LE(at, now_ms());
  EXPECT_EQ(hash(q.meta), (Row{{"flows", "1"}, {"parents", "1"}})) << "a nested parent is a child too";
  EXPECT_TRUE(zset(q.pending).empty());
  EXPECT_TRUE(claim(x, q, {30000, 10, 10}).empty()) << "a waiting parent is never claimed";
}

TEST_F(EnqueueParent, ALaneZeroRootParentHasNeitherLaneNorParent) {
  std::string id = mint_job_id();
  EXPECT_EQ(integer(enqueue_parent_call(q, id, {"c:JOB_1"})), 1);
  EXPECT_EQ(row(id), (Row{{"state", "waiting"},
                          {"attempts", "0"},
                          {"payload", "parent payload"},
                          {"children", "1"},
                          {"on_child_failure", "fail"}}));
  EXPECT_EQ(hash(q.meta), (Row{{"parents", "1"}})) << "no flows: none of the queue's jobs has a parent to tell";
}

TEST_F(EnqueueParent, ADuplicateChangesNothing) {
  std::string id = mint_job_id();
  ASSERT_EQ(integer(enqueue_parent_call(q, id, {"c:JOB_1"})), 1);
  auto before = snapshot();
  EXPECT_EQ(integer(enqueue_parent_call(q, id, {"c:JOB_2", "c:JOB_3"}, "ignore")), 0);
  EXPECT_EQ(snapshot(), before);
  std::string plain = enqueue_new();
  before = snapshot();
  EXPECT_EQ(integer(enqueue_parent_call(q, plain, {"c:JOB_2"})), 0) << "whatever the row's state";
  EXPECT_EQ(snapshot(), before);
}

TEST_F(EnqueueParent, ADepsSetLeftByAnEarlierJobOfTheIdIsReplaced) {
  std::string id = mint_job_id();
  cmd({"SADD", q.deps(id), "old:JOB_stale"});
  ASSERT_EQ(integer(enqueue_parent_call(q, id, {"c:JOB_1"})), 1);
  EXPECT_EQ(set_members(q.deps(id)), (std::vector<std::string>{"c:JOB_1"}));
}

TEST_F(EnqueueParent, TakesThousandsOfChildren) {
  std::vector<std::string> children;
  for (int i = 0; i < 2500; ++i) children.push_back("c:JOB_" + std::to_string(i));
  std::string id = mint_job_id();
  ASSERT_EQ(integer(enqueue_parent_call(q, id, children)), 1);
  EXPECT_EQ(cmd({"SCARD", q.deps(id)}).integer, 2500);
  EXPECT_EQ(row(id).at("children"), "2500");
}

TEST_F(EnqueueParent, RefusesAnIdOutsideTheJobNamespace) {
  WireError e = eval_error(enqueue_parent_call(q, "TASK_1", {"c:JOB_1"}));
  EXPECT_EQ(e.kind, ErrorKind::Kind) << e.message;
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(EnqueueParent, RefusesMalformedArgumentsAndChangesNothing) {
  std::string id = mint_job_id();
  expect_arg_errors({
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", "", "1001"), "lane must be an integer in -1000..1000"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", "", "nan"), "lane must be an integer in -1000..1000"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "retry"), "on_child_failure must be fail, wait or ignore"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, ""), "on_child_failure must be fail, wait or ignore"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", "JOB_1"), "parent ref must be <queue>:<id>"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", "p:TASK_1"), "parent ref must be <queue>:<id>"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", ":JOB_1"), "parent ref must be <queue>:<id>"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", std::string(65, 'p') + ":JOB_1"), "parent ref must be"},
      {enqueue_parent_call(q, id, {"c:JOB_1"}, "fail", "p{x}:JOB_1"), "parent ref must be"},
      {enqueue_parent_call(q, id, {}), "enqueue_parent takes at least one child ref"},
      {enqueue_parent_call(q, id, {"c:JOB_1", "c JOB_2"}), "child ref 2 must be <queue>:<id>"},
      {enqueue_parent_call(q, id, {"c:JOB_1", ""}), "child ref 2 must be <queue>:<id>"},
      {enqueue_parent_call(q, id, {"c:JOB_1", "c:JOB_2", "c:JOB_1"}), "child ref c:JOB_1 is given twice"},
  });
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(EnqueueChild, WritesAPendingChildWithItsParentAndTheFlag) {
  std::string id = mint_job_id();
  Reply r = raw(enqueue_child_call(q, id, "parents:JOB_p", "4"));
  ASSERT_EQ(r.type, Reply::Type::Integer) << r.str;
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "0"},
                          {"payload", "child payload"},
                          {"parent", "parents:JOB_p"},
                          {"lane", "4"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 4}}));
  EXPECT_EQ(hash(q.meta), (Row{{"flows", "1"}}));
  EXPECT_EQ(claim_one(id).id, id) << "a child is claimed as any job";
}

TEST_F(EnqueueChild, ALaneZeroChildHasNoLaneField) {
  std::string id = child_of(q, "parents:JOB_p");
  EXPECT_EQ(row(id).count("lane"), 0u);
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 0}}));
}

TEST_F(EnqueueChild, ADuplicateChangesNothing) {
  std::string id = child_of(q, "parents:JOB_p");
  auto before = snapshot();
  EXPECT_EQ(integer(enqueue_child_call(q, id, "parents:JOB_other", "9")), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(EnqueueChild, RefusesMalformedArgumentsAndChangesNothing) {
  WireError kind = eval_error(enqueue_child_call(q, "TASK_1", "p:JOB_1"));
  EXPECT_EQ(kind.kind, ErrorKind::Kind) << kind.message;
  std::string id = mint_job_id();
  expect_arg_errors({
      {enqueue_child_call(q, id, "p:JOB_1", "-1001"), "lane must be an integer in -1000..1000"},
      {enqueue_child_call(q, id, "p:JOB_1", ""), "lane must be an integer in -1000..1000"},
      {enqueue_child_call(q, id, ""), "parent ref must be <queue>:<id> with a JOB id"},
      {enqueue_child_call(q, id, "JOB_1"), "parent ref must be <queue>:<id> with a JOB id"},
      {enqueue_child_call(q, id, "p:job_1"), "parent ref must be <queue>:<id> with a JOB id"},
  });
  EXPECT_TRUE(snapshot().empty());
}

}  // namespace
}  // namespace echomq::test
