// cancel: 1 for every state a job can rest in, 2 for a running job (which
// it leaves alone), 0 for no job at all.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Cancel : public WireTest {
 protected:
  Reply cancel_raw(const std::string& id) {
    return raw({Script::Cancel, {q.row(id), q.pending, q.delayed, q.dead}, {id}});
  }
  std::string make(const std::string& state) {
    if (state == "pending") return enqueue_new();
    if (state == "delayed") return make_delayed();
    if (state == "dead") return make_dead();
    if (state == "completed") return make_completed_kept();
    ADD_FAILURE() << "no maker for " << state;
    return "";
  }
};

class CancelResting : public Cancel, public ::testing::WithParamInterface<const char*> {};

TEST_P(CancelResting, RemovesTheJobAndItsRow) {
  std::string id = make(GetParam());
  std::string bystander = enqueue_new("bystander");
  ASSERT_EQ(row(id).at("state"), GetParam());
  Reply r = cancel_raw(id);
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_FALSE(exists(q.row_root + id));
  for (const std::string& set : {q.pending, q.active, q.delayed, q.dead}) {
    for (const std::string& m : members(set)) EXPECT_NE(m, id) << id << " is still in " << set;
  }
  EXPECT_EQ(zset(q.pending), (ZSet{{bystander, 0}}));
  EXPECT_EQ(cancel(x, q, id), CancelResult::NotFound) << "a second cancel finds nothing";
}

INSTANTIATE_TEST_SUITE_P(EveryRestingState, CancelResting,
                         ::testing::Values("pending", "delayed", "dead", "completed"));

TEST_F(Cancel, RefusesARunningJobAndChangesNothing) {
  Lease l = make_active();
  auto before = snapshot();
  Reply r = cancel_raw(l.id);
  EXPECT_EQ(r.integer, 2);
  EXPECT_EQ(cancel(x, q, l.id), CancelResult::Refused);
  EXPECT_EQ(snapshot(), before);
  // The worker still holds its lease.
  EXPECT_EQ(complete(x, q, l, 0, ""), CompleteResult::Completed);
}

TEST_F(Cancel, AnswersZeroForNoSuchJob) {
  enqueue_new();
  auto before = snapshot();
  Reply r = cancel_raw("JOB_never_enqueued");
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(Cancel, RemovesAStraySetEntryWhoseRowIsGone) {
  // A row deleted behind the queue's back leaves an entry no claim would
  // ever serve; cancel clears it and still answers 0 (there was no job).
  const std::string stray = "JOB_stray";
  cmd({"ZADD", q.pending, "0", stray});
  cmd({"ZADD", q.delayed, "1", stray});
  cmd({"ZADD", q.dead, "1", stray});
  EXPECT_EQ(cancel(x, q, stray), CancelResult::NotFound);
  EXPECT_TRUE(snapshot().empty());
}

}  // namespace
}  // namespace echomq::test
