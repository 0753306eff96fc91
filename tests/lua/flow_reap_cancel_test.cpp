// reap and cancel, each with and without the outbox as its optional last
// KEY: with it, a child that reap sends to dead, or that cancel stops, is
// added to the outbox (cancel keeps it, dead with error "cancelled"), so
// its parent hears of it; without it, both behave as they always have.
#include "flow_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::seconds;

class FlowReap : public FlowTest {
 protected:
  void SetUp() override {
    FlowTest::SetUp();
    child = child_of(q, "parents:JOB_p");
    enqueue_new("plain");
  }
  // Claims the child and the plain job with a lease that has run out on the
  // server's clock, then reaps: {requeued, dead}.
  std::pair<std::int64_t, std::int64_t> reap_both(std::int64_t max_attempts, bool with_outbox) {
    std::vector<ClaimedJob> jobs = claim(x, q, {50, 10, 0});
    EXPECT_EQ(jobs.size(), 2u);
    std::int64_t last = zset(q.active).back().second;
    EXPECT_TRUE(wait_for([&] { return now_ms() > last; }, seconds(5)));
    ScriptCall c{
        Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root}, {std::to_string(max_attempts), "100"}};
    if (with_outbox) c.keys.push_back(q.outbox);
    Reply r = raw(c);
    EXPECT_EQ(r.elements.size(), 2u) << r.str;
    if (r.elements.size() != 2) return {-1, -1};
    return {r.elements[0].integer, r.elements[1].integer};
  }

  std::string child;
};

TEST_F(FlowReap, WithTheOutboxAChildSentToDeadIsAddedToIt) {
  std::int64_t before = now_ms();
  EXPECT_EQ(reap_both(1, true), std::make_pair(std::int64_t{0}, std::int64_t{2}));
  EXPECT_EQ(members(q.outbox), (std::vector<std::string>{child})) << "the plain job has no parent to tell";
  EXPECT_GE(score(q.outbox, child), before);
  EXPECT_EQ(row(child).at("error"), "lease expired");
}

TEST_F(FlowReap, WithTheOutboxARequeuedChildIsNoNews) {
  EXPECT_EQ(reap_both(5, true), std::make_pair(std::int64_t{2}, std::int64_t{0}));
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(FlowReap, WithoutTheOutboxAChildSentToDeadIsOnlyDead) {
  EXPECT_EQ(reap_both(1, false), std::make_pair(std::int64_t{0}, std::int64_t{2}));
  EXPECT_EQ(row(child).at("state"), "dead");
  EXPECT_FALSE(exists(q.outbox));
}

class FlowCancel : public FlowTest {
 protected:
  ScriptCall cancel_call(const std::string& id, bool with_outbox) {
    ScriptCall c{Script::Cancel, {q.row_root + id, q.pending, q.delayed, q.dead}, {id}};
    if (with_outbox) c.keys.push_back(q.outbox);
    return c;
  }
};

TEST_F(FlowCancel, WithTheOutboxAChildGoesDeadWithErrorCancelled) {
  QueueKeys pq = queue("p");
  std::string delayed_child = mint_job_id(), pending_child = mint_job_id();  // claimed in mint order
  std::string p = parent_of(pq, refs_of(q, {pending_child, delayed_child}), "ignore");
  child_of(q, pq.ref(p), pending_child);
  child_of(q, pq.ref(p), delayed_child);
  ASSERT_EQ(integer(fail_flow_call(q, claim_one(delayed_child), "slow", 5, 3600000, false)), 1);
  ASSERT_EQ(row(delayed_child).at("state"), "delayed");
  std::int64_t before = now_ms();
  for (const std::string& id : {pending_child, delayed_child}) {
    EXPECT_EQ(integer(cancel_call(id, true)), 1);
    Row r = row(id);
    EXPECT_EQ(r.at("state"), "dead");
    EXPECT_EQ(r.at("error"), "cancelled");
    EXPECT_GE(score(q.dead, id), before);
    EXPECT_GE(score(q.outbox, id), before);
  }
  EXPECT_TRUE(zset(q.pending).empty());
  EXPECT_TRUE(zset(q.delayed).empty());
  // The parent hears of both and, under ignore, runs.
  EXPECT_EQ(drain(q), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(hash(pq.row(p)).at("state"), "pending");
  EXPECT_EQ(hash(pq.results(p)), (Row{{q.ref(pending_child), "d:cancelled"}, {q.ref(delayed_child), "d:cancelled"}}));
  EXPECT_EQ(retry_job(x, q, pending_child), RetryJobResult::Moved) << "an operator can still retry it";
}

TEST_F(FlowCancel, WithTheOutboxADeadChildIsToldAgainAsCancelled) {
  std::string id = child_of(q, "parents:JOB_p");
  ASSERT_EQ(integer(fail_flow_call(q, claim_one(id), "broken", 5, 0, true)), 2);
  ASSERT_EQ(integer(outbox_ack_call(q, id, 0)), 1);
  EXPECT_EQ(integer(cancel_call(id, true)), 1);
  EXPECT_EQ(row(id).at("error"), "cancelled");
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{id}));
  EXPECT_EQ(members(q.outbox), (std::vector<std::string>{id}));
}

TEST_F(FlowCancel, WithTheOutboxACompletedChildNotYetToldIsRefused) {
  std::string id = child_of(q, "parents:JOB_p");
  ASSERT_EQ(integer(complete_flow_call(q, claim_one(id), 0, "r")), 1);
  auto before = snapshot();
  EXPECT_EQ(integer(cancel_call(id, true)), 2);
  EXPECT_EQ(snapshot(), before);
  // Once told and kept (keep_ms > 0), it is an ordinary kept row again.
  ASSERT_EQ(integer(outbox_ack_call(q, id, 600000)), 1);
  EXPECT_EQ(integer(cancel_call(id, true)), 1);
  EXPECT_FALSE(exists(q.row(id)));
}

TEST_F(FlowCancel, WithTheOutboxAJobOfNoFlowIsDeletedAsBefore) {
  std::string id = enqueue_new();
  EXPECT_EQ(integer(cancel_call(id, true)), 1);
  EXPECT_FALSE(exists(q.row(id)));
  EXPECT_FALSE(exists(q.outbox));
  EXPECT_EQ(integer(cancel_call(id, true)), 0);
  Lease l = make_active();
  EXPECT_EQ(integer(cancel_call(l.id, true)), 2);
}

TEST_F(FlowCancel, WithoutTheOutboxAChildIsDeletedAsBefore) {
  std::string id = child_of(q, "parents:JOB_p");
  EXPECT_EQ(integer(cancel_call(id, false)), 1);
  EXPECT_FALSE(exists(q.row(id)));
  EXPECT_TRUE(snapshot().count(q.outbox) == 0);
  EXPECT_TRUE(zset(q.pending).empty());
}

TEST_F(FlowCancel, AWaitingParentIsRefusedEitherWay) {
  std::string p = parent_of(q, {"c:JOB_1"}, "fail", "grand:JOB_g");
  auto before = snapshot();
  EXPECT_EQ(integer(cancel_call(p, false)), 2);
  EXPECT_EQ(integer(cancel_call(p, true)), 2);
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
