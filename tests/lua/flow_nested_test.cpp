// A three-level flow over three queues, driven as a flow-aware speaker
// drives it: a root in q, a middle parent in "b" that is itself the root's
// child, two leaves in "c". It completes bottom-up with every result
// delivered, and a leaf's death under fail reaches the root.
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class NestedFlow : public FlowTest {
 protected:
  void SetUp() override {
    FlowTest::SetUp();
    mid = mint_job_id();
    leaf1 = mint_job_id();
    leaf2 = mint_job_id();
    root = parent_of(q, {bq.ref(mid)});
    EXPECT_EQ(integer(enqueue_parent_call(bq, mid, refs_of(cq, {leaf1, leaf2}), "fail", q.ref(root))), 1);
    child_of(cq, bq.ref(mid), leaf1);
    child_of(cq, bq.ref(mid), leaf2);
  }

  QueueKeys bq = queue("b");
  QueueKeys cq = queue("c");
  std::string root, mid, leaf1, leaf2;
};

TEST_F(NestedFlow, CompletesBottomUpWithEveryResultDelivered) {
  EXPECT_EQ(row(root).at("state"), "waiting");
  EXPECT_EQ(hash(bq.row(mid)).at("state"), "waiting");
  EXPECT_EQ(hash(bq.row(mid)).at("parent"), q.ref(root));
  EXPECT_TRUE(claim(x, bq, {30000, 10, 0}).empty()) << "the middle waits for its leaves";

  ASSERT_EQ(integer(complete_flow_call(cq, claim_from(cq, leaf1), 0, "r1")), 1);
  EXPECT_EQ(drain(cq), (std::vector<std::int64_t>{1}));
  ASSERT_EQ(integer(complete_flow_call(cq, claim_from(cq, leaf2), 0, "r2")), 1);
  EXPECT_EQ(drain(cq), (std::vector<std::int64_t>{2}));
  EXPECT_TRUE(snapshot(cq).count(cq.row(leaf1)) == 0) << "acknowledged with keep_ms 0: gone";
  EXPECT_EQ(hash(bq.results(mid)), (Row{{cq.ref(leaf1), "c:r1"}, {cq.ref(leaf2), "c:r2"}}));

  ASSERT_EQ(integer(complete_flow_call(bq, claim_from(bq, mid), 0, "sheet")), 1);
  EXPECT_EQ(hash(bq.row(mid)).at("state"), "completed") << "kept until its parent is told";
  EXPECT_FALSE(exists(bq.results(mid))) << "the middle ran: its results are spent";
  EXPECT_EQ(drain(bq), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(hash(q.results(root)), (Row{{bq.ref(mid), "c:sheet"}}));

  ASSERT_EQ(integer(complete_flow_call(q, claim_one(root), 0, "mailed")), 1);
  EXPECT_FALSE(exists(q.row(root)));
  for (const QueueKeys* k : {&q, &bq, &cq}) {
    for (const auto& [key, value] : snapshot(*k)) {
      EXPECT_TRUE(key == k->stats || key == k->meta) << "left behind: " << key << " " << value;
    }
  }
}

TEST_F(NestedFlow, ALeafDeathUnderFailReachesTheRoot) {
  ASSERT_EQ(integer(fail_flow_call(cq, claim_from(cq, leaf1), "corrupt image", 5, 0, true)), 2);
  EXPECT_EQ(drain(cq), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(hash(bq.row(mid)).at("state"), "dead");
  EXPECT_EQ(members(bq.outbox), (std::vector<std::string>{mid})) << "the middle is a child: its parent must hear";
  EXPECT_EQ(drain(bq), (std::vector<std::int64_t>{3}));
  Row r = row(root);
  EXPECT_EQ(r.at("state"), "dead");
  EXPECT_EQ(r.at("error"), "child " + bq.ref(mid) + " died: child " + cq.ref(leaf1) + " died: corrupt image");
  EXPECT_TRUE(zset(q.waiting).empty());
  EXPECT_EQ(members(cq.dead), (std::vector<std::string>{leaf1})) << "the leaf stays dead for an operator";
  // The other leaf still runs and reports; nothing is waiting for it now.
  ASSERT_EQ(integer(complete_flow_call(cq, claim_from(cq, leaf2), 0, "r2")), 1);
  EXPECT_EQ(drain(cq), (std::vector<std::int64_t>{5}));
  EXPECT_FALSE(exists(cq.outbox));
}

}  // namespace
}  // namespace echomq::test
