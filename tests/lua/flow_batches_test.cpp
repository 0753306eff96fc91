// lib's batched telling (echomq/flow_batches.h) against a real server: one
// children_done per parent and one outbox_ack_many per queue, whatever the
// number of children, each child answered as child_done and outbox_ack
// would answer it, and one refusing parent never holding back the others.
// Runs on both executors (native.* too): flows are scripts on either.
#include "echomq/flow_batches.h"
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class FlowBatches : public FlowTest {
 protected:
  ChildNews news(const QueueKeys& parent_queue, const std::string& parent, const std::string& ref,
                 ChildOutcome outcome = ChildOutcome::Completed, const std::string& text = "r") {
    return {parent_queue.queue, parent, ref, outcome, text};
  }

  static std::vector<std::int64_t> integers(const std::vector<Reply>& replies) {
    std::vector<std::int64_t> out;
    for (const Reply& r : replies) out.push_back(r.type == Reply::Type::Integer ? r.integer : -1);
    return out;
  }
};

TEST_F(FlowBatches, EachParentIsToldOnceForAllItsChildrenAndEachChildGetsChildDonesAnswer) {
  QueueKeys cq = queue("c");
  std::vector<std::string> c1 = refs_of(cq, {mint_job_id(), mint_job_id(), mint_job_id()});
  std::vector<std::string> c2 = refs_of(cq, {mint_job_id()});
  std::string p1 = parent_of(q, c1);
  std::string p2 = parent_of(q, c2);
  const std::int64_t before = server().calls("evalsha");
  std::vector<Reply> r = tell_parents(x, {news(q, p1, c1[0]), news(q, p2, c2[0]), news(q, p1, c1[1]),
                                          news(q, p1, c1[0]), news(q, p1, c1[2], ChildOutcome::Completed, "last")});
  EXPECT_EQ(integers(r), (std::vector<std::int64_t>{1, 2, 1, 0, 2})) << "a ref given twice is told once";
  EXPECT_EQ(server().calls("evalsha") - before, 2) << "one children_done per parent";
  EXPECT_EQ(members(q.pending).size(), 2u);
  EXPECT_EQ(hash(q.results(p1)), (Row{{c1[0], "c:r"}, {c1[1], "c:r"}, {c1[2], "c:last"}}));
}

TEST_F(FlowBatches, AParentThatRefusesGetsItsErrorForEachOfItsChildrenAndTheOthersAreTold) {
  QueueKeys cq = queue("c");
  std::vector<std::string> bad_refs = refs_of(cq, {mint_job_id(), mint_job_id()});
  std::vector<std::string> good_refs = refs_of(cq, {mint_job_id()});
  std::string bad = parent_of(q, bad_refs);
  std::string good = parent_of(q, good_refs);
  cmd({"HSET", q.row(bad), "on_child_failure", "retry"});
  std::vector<Reply> r = tell_parents(x, {news(q, bad, bad_refs[0]), news(q, good, good_refs[0]),
                                          news(q, bad, bad_refs[1], ChildOutcome::Dead, "boom")});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].is_error() && r[0].str.rfind("EMQROW", 0) == 0) << r[0].str;
  EXPECT_TRUE(r[2].is_error() && r[2].str == r[0].str) << r[2].str;
  EXPECT_EQ(r[1].type, Reply::Type::Integer);
  EXPECT_EQ(r[1].integer, 2);
  EXPECT_EQ(set_members(q.deps(bad)).size(), 2u) << "nothing of the refusing parent was written";
  EXPECT_THROW(decode_child_done(r[0]), Error);
}

TEST_F(FlowBatches, AThousandChildrenAreToldInOneCall) {
  QueueKeys cq = queue("c");
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(mint_job_id());
  std::vector<std::string> refs = refs_of(cq, ids);
  std::string p = parent_of(q, refs);
  std::vector<ChildNews> all;
  for (const std::string& ref : refs) all.push_back(news(q, p, ref, ChildOutcome::Completed, ref));
  const std::int64_t before = server().calls("evalsha");
  std::vector<std::int64_t> got = integers(tell_parents(x, all));
  EXPECT_EQ(server().calls("evalsha") - before, 1);
  std::vector<std::int64_t> want(1000, 1);
  want.back() = 2;
  EXPECT_EQ(got, want);
  EXPECT_EQ(row(p)["state"], "pending");
  EXPECT_EQ(cmd({"HLEN", q.results(p)}).integer, 1000);
}

TEST_F(FlowBatches, AParentsQueueIsMarkedWithTheParentsFlagOnceBeforeItsFirstNews) {
  QueueKeys other = queue("p2");
  cmd({"HSET", q.meta, "flows", "1"});  // as enqueue_parent left it before the flag
  ParentQueues marked;
  marked.mark(x, {news(q, "JOB_p1", "c:JOB_1"), news(other, "JOB_p2", "c:JOB_2"), news(q, "JOB_p3", "c:JOB_3")});
  EXPECT_EQ(hash(q.meta), (Row{{"flows", "1"}, {"parents", "1"}}));
  EXPECT_EQ(hash(other.meta), (Row{{"parents", "1"}}));
  cmd({"HDEL", q.meta, "parents"});
  marked.mark(x, {news(q, "JOB_p1", "c:JOB_4")});
  EXPECT_EQ(hash(q.meta), (Row{{"flows", "1"}})) << "a queue is marked once for the life of the object";
}

TEST_F(FlowBatches, TheDecodersCheckTheReplysShape) {
  Reply three{Reply::Type::Array, 0, "", {}};
  for (int i = 0; i < 3; ++i) three.elements.push_back({Reply::Type::Integer, 1, "", {}});
  EXPECT_EQ(decode_children_done(three, 3), std::vector<ChildDoneResult>(3, ChildDoneResult::Recorded));
  EXPECT_EQ(decode_outbox_ack_many(three, 3), std::vector<bool>(3, true));
  EXPECT_THROW(decode_children_done(three, 2), Error);
  EXPECT_THROW(decode_outbox_ack_many(three, 4), Error);
}

TEST_F(FlowBatches, OutboxesAreAcknowledgedWithOneCallPerQueueAndScoresAreCompared) {
  QueueKeys a = queue("a"), b = queue("b");
  auto finished = [&](const QueueKeys& in, const std::string& id, std::int64_t score) {
    cmd({"HSET", in.row(id), "state", "completed", "attempts", "1", "payload", "p", "parent", "x:JOB_p"});
    cmd({"ZADD", in.outbox, std::to_string(score), id});
  };
  const std::string a1 = mint_job_id(), a2 = mint_job_id(), b1 = mint_job_id(), b2 = mint_job_id();
  finished(a, a1, 10);
  finished(a, a2, 11);
  finished(b, b1, 12);
  finished(b, b2, 13);
  const std::int64_t before = server().calls("evalsha");
  std::vector<Reply> r = ack_outboxes(
      x, {{a.queue, a1, 0, 10}, {b.queue, b1, 60000, 12}, {a.queue, a2, 0, 99}, {b.queue, b2, 60000, std::nullopt}});
  EXPECT_EQ(integers(r), (std::vector<std::int64_t>{1, 1, 0, 1})) << "a2 finished again since it was read";
  EXPECT_EQ(server().calls("evalsha") - before, 3)
      << "one outbox_ack_many per queue, outbox_ack for the one without a score";
  EXPECT_FALSE(exists(a.row(a1)));
  EXPECT_GT(pttl(b.row(b1)), 0);
  EXPECT_EQ(members(a.outbox), (std::vector<std::string>{a2}));
  EXPECT_TRUE(members(b.outbox).empty());
}

}  // namespace
}  // namespace echomq::test
