// enqueue_cron: one fire per tick however many callers race for it; the
// marker only moves forward; overlap skip holds back a fire while the last
// one's job is unfinished; bad arguments and a broken marker change nothing.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

constexpr std::int64_t kTick = 1733356800000;  // a tick time; any past instant will do

class EnqueueCron : public WireTest {
 protected:
  ScriptCall cron_call(const std::string& id, const std::string& fire, const std::string& overlap = "allow",
                       const std::string& lane = "0", const std::string& name = "nightly") {
    return {Script::EnqueueCron,
            {q.row_root + id, q.pending, q.cron, q.row_root},
            {id, "payload of " + id, name, fire, lane, overlap}};
  }
  std::int64_t fire(const std::string& id, std::int64_t at, const std::string& overlap = "allow",
                    const std::string& lane = "0") {
    Reply r = raw(cron_call(id, std::to_string(at), overlap, lane));
    EXPECT_EQ(r.type, Reply::Type::Integer) << r.str;
    return r.integer;
  }
  std::string marker(const std::string& name = "nightly") { return cmd({"HGET", q.cron, name}).str; }
  static std::string mark(std::int64_t at, const std::string& id) { return std::to_string(at) + ":" + id; }
};

TEST_F(EnqueueCron, TheFirstCallForATickEnqueuesAndSetsTheMarker) {
  std::string id = mint_job_id();
  EXPECT_EQ(fire(id, kTick, "allow", "7"), 1);
  EXPECT_EQ(row(id), (Row{{"state", "pending"},
                          {"attempts", "0"},
                          {"payload", "payload of " + id},
                          {"schedule", "nightly"},
                          {"lane", "7"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, 7}}));
  EXPECT_EQ(marker(), mark(kTick, id));
  EXPECT_EQ(claim_one(id).id, id) << "a fire is an ordinary job";
}

TEST_F(EnqueueCron, ALaneZeroFireHasNoLaneField) {
  std::string id = mint_job_id();
  EXPECT_EQ(fire(id, kTick), 1);
  EXPECT_EQ(row(id).count("lane"), 0u);
  EXPECT_EQ(row(id).at("schedule"), "nightly");
}

TEST_F(EnqueueCron, ASecondCallForTheSameTickEnqueuesNothing) {
  std::string first = mint_job_id();
  ASSERT_EQ(fire(first, kTick), 1);
  auto before = snapshot();
  // Another daemon, with its own freshly minted id, for the same tick.
  std::string second = mint_job_id();
  EXPECT_EQ(fire(second, kTick), 0);
  EXPECT_EQ(fire(second, kTick, "skip"), 0);
  EXPECT_EQ(snapshot(), before);
  EXPECT_FALSE(exists(q.row_root + second));
}

TEST_F(EnqueueCron, TheMarkerOnlyMovesForward) {
  std::string a = mint_job_id(), b = mint_job_id(), late = mint_job_id();
  ASSERT_EQ(fire(a, kTick), 1);
  ASSERT_EQ(fire(b, kTick + 60000), 1);
  EXPECT_EQ(marker(), mark(kTick + 60000, b));
  auto before = snapshot();
  // A daemon whose clock is behind, or a slow one, asks for an older tick.
  EXPECT_EQ(fire(late, kTick + 30000), 0);
  EXPECT_EQ(fire(late, kTick), 0);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(members(q.pending), (std::vector<std::string>{a, b}));
}

TEST_F(EnqueueCron, SchedulesOfOneQueueKeepTheirOwnMarkers) {
  std::string a = mint_job_id(), b = mint_job_id();
  ASSERT_EQ(raw(cron_call(a, std::to_string(kTick), "allow", "0", "one")).integer, 1);
  ASSERT_EQ(raw(cron_call(b, std::to_string(kTick), "allow", "0", "two")).integer, 1);
  EXPECT_EQ(hash(q.cron), (Row{{"one", mark(kTick, a)}, {"two", mark(kTick, b)}}));
}

TEST_F(EnqueueCron, ARowThatExistsAdvancesTheMarkerAndNothingElse) {
  std::string old = mint_job_id();
  ASSERT_EQ(fire(old, kTick), 1);
  std::string taken = enqueue_new("someone else's job");
  Row taken_row = row(taken);
  auto pending_before = zset(q.pending);
  EXPECT_EQ(fire(taken, kTick + 60000), 0);
  EXPECT_EQ(marker(), mark(kTick + 60000, taken));
  EXPECT_EQ(row(taken), taken_row);
  EXPECT_EQ(zset(q.pending), pending_before);
  EXPECT_EQ(fire(mint_job_id(), kTick + 60000), 0) << "that tick is taken";
}

class EnqueueCronSkip : public EnqueueCron, public ::testing::WithParamInterface<const char*> {
 protected:
  // The last fire's job, brought to the state under test.
  std::string last_fire_in(const std::string& state) {
    std::string id = mint_job_id();
    EXPECT_EQ(fire(id, kTick), 1);
    if (state == "pending") return id;
    Lease l = claim_one(id);
    if (state == "delayed") {
      EXPECT_EQ(fail(x, q, l, {"slow", 5, 3600000, false}), FailResult::Retry);
    }
    return id;
  }
};

TEST_P(EnqueueCronSkip, HoldsBackTheFireWhileTheLastJobIsUnfinished) {
  std::string last = last_fire_in(GetParam());
  ASSERT_EQ(row(last).at("state"), GetParam());
  auto before = snapshot();
  std::string next = mint_job_id();
  EXPECT_EQ(fire(next, kTick + 60000, "skip"), 2);
  EXPECT_FALSE(exists(q.row_root + next));
  EXPECT_EQ(marker(), mark(kTick + 60000, last)) << "the tick is taken, the last job still named";
  before[q.cron] = "hash: nightly=" + mark(kTick + 60000, last);
  EXPECT_EQ(snapshot(), before);
  // The next tick is held back too, and the one after the job finishes fires.
  EXPECT_EQ(fire(mint_job_id(), kTick + 120000, "skip"), 2);
  EXPECT_EQ(marker(), mark(kTick + 120000, last));
}

INSTANTIATE_TEST_SUITE_P(UnfinishedStates, EnqueueCronSkip, ::testing::Values("pending", "delayed", "active"));

TEST_F(EnqueueCron, SkipFiresOnceTheLastJobIsDoneDeadOrGone) {
  std::string a = mint_job_id();
  ASSERT_EQ(fire(a, kTick), 1);
  Lease la = claim_one(a);
  ASSERT_EQ(complete(x, q, la, 600000, "kept"), CompleteResult::Completed);  // kept row, state completed
  std::string b = mint_job_id();
  EXPECT_EQ(fire(b, kTick + 1000, "skip"), 1);
  Lease lb = claim_one(b);
  ASSERT_EQ(fail(x, q, lb, {"broken", 5, 0, true}), FailResult::Dead);
  std::string c = mint_job_id();
  EXPECT_EQ(fire(c, kTick + 2000, "skip"), 1);
  Lease lc = claim_one(c);
  ASSERT_EQ(complete(x, q, lc, 0, ""), CompleteResult::Completed);  // row deleted
  std::string d = mint_job_id();
  EXPECT_EQ(fire(d, kTick + 3000, "skip"), 1);
  EXPECT_EQ(marker(), mark(kTick + 3000, d));
}

TEST_F(EnqueueCron, AllowFiresWhateverTheLastJobIsDoing) {
  std::string a = mint_job_id(), b = mint_job_id();
  ASSERT_EQ(fire(a, kTick), 1);
  EXPECT_EQ(fire(b, kTick + 1000, "allow"), 1);
  EXPECT_EQ(members(q.pending), (std::vector<std::string>{a, b}));
}

TEST_F(EnqueueCron, TheLatestTickIsWrittenAsDigits) {
  std::string id = mint_job_id();
  EXPECT_EQ(fire(id, 1000000000000000), 1);
  EXPECT_EQ(marker(), "1000000000000000:" + id);
  EXPECT_EQ(fire(mint_job_id(), 1000000000000000), 0);
}

TEST_F(EnqueueCron, RefusesAnIdOutsideTheJobNamespace) {
  WireError e = eval_error(cron_call("TASK_1", std::to_string(kTick)));
  EXPECT_EQ(e.kind, ErrorKind::Kind);
  EXPECT_NE(e.message.find("EMQKIND job id must be JOB-namespaced"), std::string::npos) << e.message;
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(EnqueueCron, RefusesMalformedArgumentsAndChangesNothing) {
  std::string id = mint_job_id();
  std::string tick = std::to_string(kTick);
  expect_arg_errors({
      {cron_call(id, tick, "allow", "0", ""), "name must be 1-64 bytes"},
      {cron_call(id, tick, "allow", "0", std::string(65, 'n')), "name must be 1-64 bytes"},
      {cron_call(id, tick, "allow", "0", "a:b"), "name must be 1-64 bytes"},
      {cron_call(id, "-1"), "fire_ms must be an integer in 0..1000000000000000"},
      {cron_call(id, "soon"), "fire_ms must be an integer"},
      {cron_call(id, "1000000000000001"), "fire_ms must be an integer"},
      {cron_call(id, std::string(400, '9')), "fire_ms must be an integer"},
      {cron_call(id, tick, "allow", "1001"), "lane must be an integer in -1000..1000"},
      {cron_call(id, tick, "allow", "x"), "lane must be an integer in -1000..1000"},
      {cron_call(id, tick, "maybe"), "overlap must be allow or skip"},
      {cron_call(id, tick, ""), "overlap must be allow or skip"},
  });
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(EnqueueCron, ABrokenMarkerStopsTheScheduleAndChangesNothing) {
  for (const std::string& broken : {std::string("yesterday"), std::string("12:"), std::string(":JOB_1"),
                                    std::string("1e15:JOB_1"), std::string(20, '9') + ":JOB_1"}) {
    cmd({"HSET", q.cron, "nightly", broken});
    auto before = snapshot();
    WireError e = eval_error(cron_call(mint_job_id(), std::to_string(kTick)));
    EXPECT_NE(e.message.find("EMQROW " + q.cron + " nightly is not <fire_ms>:<job id>; nothing was written"),
              std::string::npos)
        << broken << ": " << e.message;
    EXPECT_EQ(snapshot(), before) << broken;
  }
}

}  // namespace
}  // namespace echomq::test
