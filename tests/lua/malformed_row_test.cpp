// Rows and counters some other writer broke: every number a transition
// reads from a row or increments is checked before it writes. A single-job
// transition refuses a malformed row with EMQROW, naming the row and the
// field, and writes nothing; the bulk ones leave such a job in the set it
// is in (a lane) or send it to dead as PROTOCOL.md says (a counter of a
// hash; a key that is not a hash is dropped from its set); a broken stats
// counter is left as it is while the job is settled. Whatever happens, the
// job is never left in no set. Runs on both executors.
#include <algorithm>

#include "wire_fixture.h"

namespace echomq::test {
namespace {

// Lanes a transition must refuse to place a job at.
const std::vector<std::string> kBadLanes = {
    "nan", "-nan", "inf", "1001", "-1001", "1.5", "abc", "", std::string(400, '9')};
// Counters HINCRBY would refuse, or could overflow.
const std::vector<std::string> kBadCounters = {"abc", "1.5", "007", "-0", " 1", std::string(19, '9')};

class MalformedRow : public WireTest {
 protected:
  std::string emqrow(const std::string& id, const std::string& field, const std::string& rule) {
    return "EMQROW " + q.row(id) + " " + field + " is not " + rule + "; nothing was written";
  }
  static constexpr const char* kLane = "an integer in -1000..1000";
  static constexpr const char* kCounter = "an integer counter";

  // Refused with exactly this text, and the queue's keys are as they were.
  void expect_row_refused(const ScriptCall& call, const std::string& text) {
    auto before = snapshot();
    WireError e = eval_error(call);
    EXPECT_EQ(e.kind, ErrorKind::Reply) << e.message;
    EXPECT_NE(e.message.find(text), std::string::npos) << "'" << e.message << "' is not '" << text << "'";
    EXPECT_EQ(snapshot(), before) << script_info(call.script).name << " wrote before refusing";
  }

  // Claim or reap met a counter that is not an integer: dead, named.
  void expect_sent_to_dead(const std::string& id, const std::string& field) {
    EXPECT_EQ(row(id).at("state"), "dead") << id;
    EXPECT_EQ(row(id).at("error"), "row field " + field + " is not an integer") << id;
    EXPECT_GE(score(q.dead, id), now_ms() - 60000) << "dead score now";
    expect_in_its_set(id);
  }

  // The set named by the row's state holds the id, and no other set does.
  void expect_in_its_set(const std::string& id) {
    const std::string state = row(id).at("state");
    const std::map<std::string, std::string> sets{
        {"pending", q.pending}, {"active", q.active}, {"delayed", q.delayed}, {"dead", q.dead}};
    for (const auto& [name, set] : sets) {
      const bool named = name == state;
      EXPECT_EQ(cmd({"ZSCORE", set, id}).type == Reply::Type::String, named)
          << id << " in state " << state << (named ? " is missing from " : " is also in ") << set;
    }
  }
};

TEST_F(MalformedRow, FailAndReleaseRefuseABadLaneAndWriteNothing) {
  for (const std::string& lane : kBadLanes) {
    Lease l = make_active();
    cmd({"HSET", q.row(l.id), "lane", lane});
    expect_row_refused(fail_call(q, l, {"boom", 5, 0, false}), emqrow(l.id, "lane", kLane));
    expect_row_refused(release_call(q, l), emqrow(l.id, "lane", kLane));
    expect_in_its_set(l.id);
  }
}

TEST_F(MalformedRow, FailAndReleaseRefuseABadAttemptsOrFailures) {
  for (const std::string& bad : kBadCounters) {
    Lease l = make_active();
    cmd({"HSET", q.row(l.id), "attempts", bad});
    expect_row_refused(fail_call(q, l, {"boom", 5, 0, false}), emqrow(l.id, "attempts", kCounter));
    expect_row_refused(release_call(q, l), emqrow(l.id, "attempts", kCounter));
    cmd({"HSET", q.row(l.id), "attempts", "1", "failures", bad});
    expect_row_refused(fail_call(q, l, {"boom", 5, 1000, true}), emqrow(l.id, "failures", kCounter));
    expect_in_its_set(l.id);
  }
}

TEST_F(MalformedRow, RetryJobRefusesABadLane) {
  const std::string id = make_dead();
  cmd({"HSET", q.row(id), "lane", "nan"});
  expect_row_refused(retry_job_call(q, id), emqrow(id, "lane", kLane));
  expect_in_its_set(id);
}

TEST_F(MalformedRow, PromotionLeavesABadLaneInDelayedAndMovesTheRest) {
  const std::string bad = enqueue_new("p", {0, 1});
  const std::string good = enqueue_new("p", {3, 1});
  cmd({"HSET", q.row(bad), "lane", "-nan"});
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 5, 5});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, good);
  EXPECT_EQ(members(q.delayed), std::vector<std::string>{bad});
  EXPECT_EQ(row(bad).at("state"), "delayed");
  expect_in_its_set(bad);
}

// Issue 37, row 15: a hash with a broken counter was dropped from active
// and then in no set at all.
TEST_F(MalformedRow, ReapLeavesABadLaneInActiveAndSendsABadCounterToDead) {
  Lease lane = make_active("p", 1);
  Lease attempts = make_active("p", 1);
  Lease good = make_active("p", 1);
  cmd({"HSET", q.row(lane.id), "lane", "1e400"});
  cmd({"HSET", q.row(attempts.id), "attempts", "many"});
  // Wait on the server's clock until all three leases have lapsed.
  const std::int64_t until = now_ms() + 5;
  while (now_ms() <= until) {
  }
  ReapResult r = reap(x, q, 5, 10);
  EXPECT_EQ(r.requeued, 1);
  EXPECT_EQ(members(q.pending), std::vector<std::string>{good.id});
  EXPECT_EQ(members(q.active), std::vector<std::string>{lane.id});
  expect_in_its_set(lane.id);
  EXPECT_EQ(row(lane.id).count("failures"), 0u) << "nothing is written to a row that stays";
  expect_sent_to_dead(attempts.id, "attempts");
  EXPECT_EQ(row(attempts.id).at("attempts"), "many");
  EXPECT_EQ(row(attempts.id).count("failures"), 0u) << "nothing else is written";
}

TEST_F(MalformedRow, RetryDeadLeavesABadRowInDeadAndMovesTheRest) {
  const std::string lane = make_dead();
  const std::string string_row = make_dead();
  const std::string good = make_dead();
  cmd({"HSET", q.row(lane), "lane", "nan"});
  cmd({"DEL", q.row(string_row)});
  cmd({"SET", q.row(string_row), "not a hash"});
  EXPECT_EQ(retry_dead(x, q, 10).moved, 1);
  EXPECT_EQ(members(q.pending), std::vector<std::string>{good});
  std::vector<std::string> dead = members(q.dead);
  std::sort(dead.begin(), dead.end());
  std::vector<std::string> expected{lane, string_row};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dead, expected);
  expect_in_its_set(lane);
}

TEST_F(MalformedRow, ClaimSendsACounterHincrbyWouldRefuseToDead) {
  // '007' matches the old pattern but HINCRBY refuses it: the script used
  // to pop it and then fail half-way.
  const std::string bad = enqueue_new();
  const std::string good = enqueue_new();
  cmd({"HSET", q.row(bad), "attempts", "007"});
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 5, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, good);
  EXPECT_EQ(row(bad).at("attempts"), "007");
  expect_sent_to_dead(bad, "attempts");
}

// Issue 37, row 15: a due delayed hash whose attempts is broken was
// promoted, then dropped from pending by the claim: in no set, for ever.
TEST_F(MalformedRow, ClaimPromotesADueRowWithABadCounterThenSendsItToDead) {
  for (const std::string field : {"attempts", "lease_epoch"}) {
    const std::string bad = enqueue_new("p", {2, 1});
    cmd({"HSET", q.row(bad), field, "1.5"});
    EXPECT_TRUE(claim(x, q, {30000, 5, 5}).empty());
    expect_sent_to_dead(bad, field);
    EXPECT_EQ(row(bad).at("lane"), "2");
    EXPECT_EQ(row(bad).count("lease_epoch") + row(bad).count("failures"), field == "lease_epoch" ? 1u : 0u)
        << "nothing else is written";
  }
}

TEST_F(MalformedRow, ExtendDecidesEveryJobBeforeRenewingAny) {
  Lease held = make_active("p", 30000);
  const std::int64_t deadline = score(q.active, held.id);
  cmd({"SET", q.row("JOB_str"), "not a hash"});
  WireError e = eval_error(extend_call(q, 3600000, {held, {"JOB_str", 1}}));
  EXPECT_NE(e.message.find("WRONGTYPE"), std::string::npos) << e.message;
  EXPECT_EQ(score(q.active, held.id), deadline) << "the first lease was renewed before the call failed";
}

// A broken counter (not an integer, or stats not a hash) must not make a
// transition settle the job and then reply an error: it settles, replies
// as usual, and leaves the counter as it is.
TEST_F(MalformedRow, ABrokenCounterIsLeftAsItIsAndTheJobSettles) {
  for (const std::string& bad : {std::string("x"), std::string("1.5"), std::string(19, '9')}) {
    cmd({"DEL", q.stats});
    cmd({"HSET", q.stats, "completed", bad, "retried", bad, "dead", bad, "released", bad, "reaped", bad});
    Lease c = make_active();
    EXPECT_EQ(complete(x, q, c, 0, ""), CompleteResult::Completed);
    Lease f = make_active();
    EXPECT_EQ(fail(x, q, f, {"e", 5, 0, false}), FailResult::Retry);
    expect_in_its_set(f.id);
    EXPECT_EQ(cancel(x, q, f.id), CancelResult::Removed);  // out of the next claims' way
    Lease d = make_active();
    EXPECT_EQ(fail(x, q, d, {"e", 5, 0, true}), FailResult::Dead);
    expect_in_its_set(d.id);
    Lease r = make_active();
    EXPECT_EQ(release(x, q, r), ReleaseResult::Released);
    expect_in_its_set(r.id);
    EXPECT_EQ(cancel(x, q, r.id), CancelResult::Removed);
    Lease lapsed = make_active("p", 1);
    const std::int64_t until = now_ms() + 5;
    while (now_ms() <= until) {
    }
    EXPECT_EQ(reap(x, q, 5, 10).requeued, 1);
    expect_in_its_set(lapsed.id);
    EXPECT_EQ(cancel(x, q, lapsed.id), CancelResult::Removed);
    Row stats = hash(q.stats);
    for (const char* field : {"completed", "retried", "dead", "released", "reaped"}) {
      EXPECT_EQ(stats.at(field), bad) << field;
    }
  }
  // stats of the wrong type: every counter is broken at once.
  cmd({"DEL", q.stats});
  cmd({"SET", q.stats, "not a hash"});
  Lease c = make_active();
  EXPECT_EQ(complete(x, q, c, 0, ""), CompleteResult::Completed);
  Lease f = make_active();
  EXPECT_EQ(fail(x, q, f, {"e", 5, 0, false}), FailResult::Retry);
  EXPECT_EQ(cancel(x, q, f.id), CancelResult::Removed);
  Lease r = make_active();
  EXPECT_EQ(release(x, q, r), ReleaseResult::Released);
  EXPECT_EQ(cmd({"GET", q.stats}).str, "not a hash");
}

// The set a transition adds a job to, made a string by another writer:
// refused with WRONGTYPE before the job leaves the set it is in.
TEST_F(MalformedRow, ASetOfTheWrongTypeIsRefusedBeforeAnyWrite) {
  Lease l = make_active();
  const std::string dead = make_dead();
  auto spoil = [&](const std::string& set) {
    Reply kept = cmd({"DUMP", set});
    cmd({"DEL", set});
    cmd({"SET", set, "not a zset"});
    return kept;
  };
  auto restore = [&](const std::string& set, const Reply& kept) {
    cmd({"DEL", set});
    if (kept.type == Reply::Type::String) cmd({"RESTORE", set, "0", kept.str});
  };
  auto expect_wrongtype = [&](const ScriptCall& call) {
    auto before = snapshot();
    WireError e = eval_error(call);
    EXPECT_NE(e.message.find("WRONGTYPE"), std::string::npos) << e.message;
    EXPECT_EQ(snapshot(), before) << script_info(call.script).name << " wrote before refusing";
  };
  Reply kept = spoil(q.pending);
  expect_wrongtype(fail_call(q, l, {"boom", 5, 0, false}));
  expect_wrongtype(release_call(q, l));
  expect_wrongtype(retry_job_call(q, dead));
  expect_wrongtype({Script::RetryDead, {q.dead, q.pending, q.row_root}, {"10"}});
  expect_wrongtype({Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root}, {"5", "10"}});
  enqueue_new("p", {0, 1});  // due: the claim below would promote it into the spoilt pending
  expect_wrongtype(claim_call(q, {30000, 5, 5}));
  restore(q.pending, kept);
  kept = spoil(q.delayed);
  expect_wrongtype(fail_call(q, l, {"boom", 5, 1000, false}));
  restore(q.delayed, kept);
  kept = spoil(q.active);
  expect_wrongtype(claim_call(q, {30000, 5, 5}));  // it would pop, then fail on ZADD active
  restore(q.active, kept);
  kept = spoil(q.dead);
  expect_wrongtype(fail_call(q, l, {"boom", 5, 0, true}));
  restore(q.dead, kept);
  // A child's outbox, which complete_flow, fail_flow and reap add it to.
  cmd({"HSET", q.row(l.id), "parent", "other:JOB_parent"});
  kept = spoil(q.outbox);
  const std::string e = std::to_string(l.epoch);
  expect_wrongtype({Script::CompleteFlow,
                    {q.row(l.id), q.active, q.stats, q.outbox, q.deps_root, q.results_root},
                    {l.id, e, "0", "r"}});
  expect_wrongtype(
      {Script::FailFlow,
       {q.row(l.id), q.active, q.delayed, q.pending, q.dead, q.stats, q.outbox, q.deps_root, q.results_root},
       {l.id, e, "boom", "5", "0", "1"}});
  expect_wrongtype({Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root, q.outbox}, {"5", "10"}});
  restore(q.outbox, kept);
  expect_in_its_set(l.id);
  expect_in_its_set(dead);
}

}  // namespace
}  // namespace echomq::test
