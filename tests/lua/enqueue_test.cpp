// enqueue, enqueue_lane, enqueue_at: the row they write, the set entry, and
// the duplicate rule (an existing row is never touched, whatever its state).
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Enqueue : public WireTest {};

TEST_F(Enqueue, WritesTheThreeFieldRowAndAPendingEntryAtLane0) {
  std::string id = mint_job_id();
  Reply r = raw(enqueue_call(q, id, "hello"));
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "hello"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 0}}));
  // Nothing else: no stats, no other set.
  auto keys = snapshot();
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys.count(q.row_root + id));
  EXPECT_TRUE(keys.count(q.pending));
}

TEST_F(Enqueue, TheTypedCallPicksTheTransitionTheOptionsAsk) {
  EXPECT_EQ(enqueue_call(q, "JOB_a", "p").script, Script::Enqueue);
  EXPECT_EQ(enqueue_call(q, "JOB_a", "p", {3, std::nullopt}).script, Script::EnqueueLane);
  EXPECT_EQ(enqueue_call(q, "JOB_a", "p", {0, 123}).script, Script::EnqueueAt);
  EXPECT_EQ(enqueue_call(q, "JOB_a", "p", {3, 123}).script, Script::EnqueueAt);
}

TEST_F(Enqueue, LaneIsKeptInTheRowAndAsThePendingScore) {
  struct Case {
    int lane;
    std::int64_t score;
  };
  for (Case c : {Case{-7, -7}, Case{1000, 1000}, Case{-1000, -1000}, Case{1, 1}}) {
    std::string id = mint_job_id();
    EXPECT_EQ(enqueue(x, q, id, "p", {c.lane, std::nullopt}), EnqueueResult::Enqueued);
    EXPECT_EQ(row(id),
              (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "p"}, {"lane", std::to_string(c.lane)}}))
        << c.lane;
    EXPECT_EQ(score(q.pending, id), c.score);
  }
}

TEST_F(Enqueue, EnqueueLaneAtLane0WritesTheSeedRow) {
  std::string id = mint_job_id();
  Reply r = raw({Script::EnqueueLane, {q.row(id), q.pending}, {id, "p", "0"}});
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "p"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 0}}));
}

TEST_F(Enqueue, EnqueueAtWaitsInTheDelayedSetAtItsDueTime) {
  std::int64_t due = now_ms() + 60000;
  std::string at_lane = enqueue_new("later", {-4, due});
  std::string at_zero = enqueue_new("later too", {0, due + 1});
  EXPECT_EQ(row(at_lane), (Row{{"state", "delayed"}, {"attempts", "0"}, {"payload", "later"}, {"lane", "-4"}}));
  EXPECT_EQ(row(at_zero), (Row{{"state", "delayed"}, {"attempts", "0"}, {"payload", "later too"}}));
  EXPECT_EQ(zset(q.delayed), (ZSet{{at_lane, due}, {at_zero, due + 1}}));
  EXPECT_EQ(zset(q.pending), ZSet{});
}

TEST_F(Enqueue, BadLaneIsRefusedHostSideBeforeTheServerSeesIt) {
  for (int lane : {1001, -1001}) {
    try {
      enqueue(x, q, mint_job_id(), "p", {lane, std::nullopt});
      ADD_FAILURE() << "lane " << lane << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Invalid);
      EXPECT_NE(std::string(e.what()).find("-1000..1000"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(Enqueue, TheWireChecksOnlyTheJobPrefixTheHostChecksTheWholeId) {
  // PROTOCOL.md: "The wire checks only the first three bytes (JOB); the full
  // check is host-side." A peer may send JOBX; our typed API refuses it.
  Reply r = raw({Script::Enqueue, {q.row_root + "JOBX", q.pending}, {"JOBX", "p"}});
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(row("JOBX").at("state"), "pending");
  for (const char* bad : {"JOBX", "JOB_", "JOB_a b", "JOB_a{b}"}) {
    try {
      enqueue(x, q, bad, "p");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Invalid) << bad;
    }
  }
}

// Duplicates: whatever state the existing row is in, every enqueue variant
// answers 0 and leaves the whole queue as it was.
class EnqueueDuplicate : public WireTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string make(const std::string& state) {
    if (state == "pending") return enqueue_new("first");
    if (state == "delayed") return make_delayed("first");
    if (state == "active") return make_active("first").id;
    if (state == "completed") return make_completed_kept("first");
    if (state == "dead") return make_dead("first");
    ADD_FAILURE() << "no maker for " << state;
    return "";
  }
};

TEST_P(EnqueueDuplicate, AnswersZeroAndChangesNothing) {
  const std::string state = GetParam();
  std::string id = make(state);
  ASSERT_EQ(row(id).at("state"), state);
  auto before = snapshot();
  for (const EnqueueOptions& o :
       {EnqueueOptions{}, EnqueueOptions{5, std::nullopt}, EnqueueOptions{0, 1}, EnqueueOptions{-3, now_ms() + 1000}}) {
    Reply r = raw(enqueue_call(q, id, "second", o));
    EXPECT_EQ(r.type, Reply::Type::Integer);
    EXPECT_EQ(r.integer, 0) << script_info(enqueue_call(q, id, "", o).script).name;
    EXPECT_EQ(decode_enqueue(r), EnqueueResult::Duplicate);
  }
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(row(id).at("payload"), "first");
}

INSTANTIATE_TEST_SUITE_P(EveryState, EnqueueDuplicate,
                         ::testing::Values("pending", "delayed", "active", "completed", "dead"));

}  // namespace
}  // namespace echomq::test
