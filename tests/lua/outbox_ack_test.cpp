// outbox_ack: the id leaves the outbox; a completed child's row is deleted
// (keep_ms 0) or left to expire; a dead one stays for an operator; an id
// not in the outbox changes nothing.
#include "echomq/flows.h"
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class OutboxAck : public FlowTest {
 protected:
  // A child of q, completed through complete_flow: kept, in the outbox.
  std::string completed_child() {
    std::string id = child_of(q, "parents:JOB_p");
    EXPECT_EQ(integer(complete_flow_call(q, claim_one(id), 0, "the result")), 1);
    return id;
  }
  std::string dead_child() {
    std::string id = child_of(q, "parents:JOB_p");
    EXPECT_EQ(integer(fail_flow_call(q, claim_one(id), "broken", 5, 0, true)), 2);
    return id;
  }
};

TEST_F(OutboxAck, KeepZeroDeletesACompletedChild) {
  std::string id = completed_child();
  ASSERT_EQ(members(q.outbox), (std::vector<std::string>{id}));
  EXPECT_EQ(integer(outbox_ack_call(q, id, 0)), 1);
  EXPECT_FALSE(exists(q.row(id)));
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(OutboxAck, KeepAboveZeroLeavesACompletedChildToExpire) {
  std::string id = completed_child();
  ASSERT_EQ(pttl(q.row(id)), -1);
  EXPECT_EQ(integer(outbox_ack_call(q, id, 600000)), 1);
  EXPECT_EQ(row(id).at("state"), "completed");
  EXPECT_EQ(row(id).at("result"), "the result");
  std::int64_t ttl = pttl(q.row(id));
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 600000);
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(OutboxAck, ADeadChildStaysDead) {
  std::string id = dead_child();
  Row before = row(id);
  EXPECT_EQ(integer(outbox_ack_call(q, id, 0)), 1);
  EXPECT_EQ(row(id), before);
  EXPECT_EQ(pttl(q.row(id)), -1);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{id}));
  EXPECT_FALSE(exists(q.outbox));
  EXPECT_EQ(retry_job(x, q, id), RetryJobResult::Moved) << "an operator can still retry it";
}

TEST_F(OutboxAck, AnIdNotInTheOutboxChangesNothing) {
  std::string id = completed_child();
  ASSERT_EQ(integer(outbox_ack_call(q, id, 600000)), 1);
  auto before = snapshot();
  EXPECT_EQ(integer(outbox_ack_call(q, id, 0)), 0) << "acknowledged twice: the row is not deleted now";
  EXPECT_EQ(integer(outbox_ack_call(q, mint_job_id(), 0)), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(OutboxAck, WithTheScoreReadOnlyThatFinishLeaves) {
  // The drainer read a dead child and told its parent; before its ack, an
  // operator retried the child and it completed: the id is back in the
  // outbox with a later score, news the parent has not had.
  std::string id = dead_child();
  const std::int64_t told = score(q.outbox, id);
  ASSERT_EQ(retry_job(x, q, id), RetryJobResult::Moved);
  ASSERT_EQ(integer(complete_flow_call(q, claim_one(id), 0, "second run")), 1);
  cmd({"ZADD", q.outbox, std::to_string(told + 7), id});  // the same ms is possible; make it later
  auto before = snapshot();
  EXPECT_EQ(integer(echomq::outbox_ack_call(q, id, 0, told)), 0) << "a stale ack leaves the new finish";
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(row(id).at("result"), "second run");
  EXPECT_EQ(integer(echomq::outbox_ack_call(q, id, 0, told + 7)), 1) << "the ack of the finish it read";
  EXPECT_FALSE(exists(q.row(id)));
  EXPECT_FALSE(exists(q.outbox));
}

TEST_F(OutboxAck, AnIdWhoseRowIsGoneOnlyLeavesTheOutbox) {
  cmd({"ZADD", q.outbox, "1", "JOB_gone"});
  EXPECT_EQ(integer(outbox_ack_call(q, "JOB_gone", 0)), 1);
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(OutboxAck, RefusesMalformedArgumentsAndChangesNothing) {
  std::string id = completed_child();
  auto before = snapshot();
  WireError kind = eval_error({Script::OutboxAck, {q.row_root + "TASK_1", q.outbox}, {"TASK_1", "0"}});
  EXPECT_EQ(kind.kind, ErrorKind::Kind) << kind.message;
  for (const std::string& keep : {std::string("-1"), std::string("soon"), std::string(""), std::string(16, '9')}) {
    WireError e = eval_error({Script::OutboxAck, {q.row(id), q.outbox}, {id, keep}});
    EXPECT_EQ(e.kind, ErrorKind::Arg) << e.message;
    EXPECT_NE(e.message.find("EMQARG keep_ms must be an integer in 0..1000000000000"), std::string::npos) << e.message;
  }
  for (const std::string& read : {std::string("1.5"), std::string("soon"), std::string(""), std::string(18, '9')}) {
    WireError e = eval_error({Script::OutboxAck, {q.row(id), q.outbox}, {id, "0", read}});
    EXPECT_EQ(e.kind, ErrorKind::Arg) << e.message;
    EXPECT_NE(e.message.find("EMQARG score must be an integer of at most 16 digits"), std::string::npos) << e.message;
  }
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
