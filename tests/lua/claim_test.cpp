// claim: the lease it hands out, its order (lane, then id bytes), the
// delayed promotion it does first, and the paused queue it leaves alone.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Claim : public WireTest {
 protected:
  ScriptCall claim_call(std::int64_t lease_ms, std::int64_t max_count, std::int64_t promote_limit) {
    return {Script::Claim,
            {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root},
            {std::to_string(lease_ms), std::to_string(max_count), std::to_string(promote_limit)}};
  }
  std::vector<std::string> ids_of(const std::vector<ClaimedJob>& jobs) {
    std::vector<std::string> ids;
    for (const ClaimedJob& j : jobs) ids.push_back(j.id);
    return ids;
  }
};

TEST_F(Claim, LeasesEachJobAndRepliesAFlatJobList) {
  std::string a = enqueue_new("first");
  std::string b = enqueue_new("second");
  std::int64_t before = now_ms();
  Reply r = raw(claim_call(5000, 10, 0));
  std::int64_t after = now_ms();

  ASSERT_EQ(r.type, Reply::Type::Array);
  ASSERT_EQ(r.elements.size(), 8u);
  const std::vector<std::string> ids{a, b}, payloads{"first", "second"};
  for (std::size_t j = 0; j < 2; ++j) {
    const Reply* e = &r.elements[j * 4];
    EXPECT_EQ(e[0].type, Reply::Type::String);
    EXPECT_EQ(e[0].str, ids[j]);
    EXPECT_EQ(e[1].type, Reply::Type::String);
    EXPECT_EQ(e[1].str, payloads[j]);
    EXPECT_EQ(e[2].type, Reply::Type::Integer);  // attempts
    EXPECT_EQ(e[2].integer, 1);
    EXPECT_EQ(e[3].type, Reply::Type::Integer);  // lease_epoch
    EXPECT_EQ(e[3].integer, 1);
    EXPECT_EQ(row(ids[j]),
              (Row{{"state", "active"}, {"attempts", "1"}, {"payload", payloads[j]}, {"lease_epoch", "1"}}));
    std::int64_t deadline = score(q.active, ids[j]);
    EXPECT_GE(deadline, before + 5000);
    EXPECT_LE(deadline, after + 5000);
  }
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_EQ(hash(q.stats), (Row{{"claimed", "2"}}));
}

TEST_F(Claim, EveryClaimCountsAnAttemptAndMintsANewEpoch) {
  std::string id = enqueue_new();
  for (std::int64_t n = 1; n <= 3; ++n) {
    std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].attempt, n);
    EXPECT_EQ(jobs[0].lease_epoch, n);
    EXPECT_EQ(fail(x, q, {id, n}, {"again", 10, 0, false}), FailResult::Retry);
  }
  EXPECT_EQ(row(id).at("attempts"), "3");
  EXPECT_EQ(row(id).at("lease_epoch"), "3");
}

// Counters as long as claim accepts (18 characters, either sign) count on
// exactly, as HINCRBY would: past 15 digits a double no longer holds them.
TEST_F(Claim, CountersOfEighteenDigitsCountOnExactly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"999999999999999999", "1000000000000000000"}, {"-1000000000000000", "-999999999999999"},
      {"123456789012345678", "123456789012345679"},  {"-12345678901234567", "-12345678901234566"},
      {"999999999999999", "1000000000000000"},       {"-1", "0"}};
  for (const auto& [was, now] : cases) {
    std::string id = enqueue_new();
    cmd({"HSET", q.row(id), "attempts", was, "lease_epoch", was});
    Reply r = raw(claim_call(5000, 1, 0));
    ASSERT_EQ(r.elements.size(), 4u) << was;
    EXPECT_EQ(row(id).at("attempts"), now) << was;
    EXPECT_EQ(row(id).at("lease_epoch"), now) << was;
    EXPECT_EQ(row(id).at("state"), "active") << was;
  }
}

TEST_F(Claim, NothingDueRepliesEmptyAndWritesNothing) {
  Reply r = raw(claim_call(30000, 10, 100));
  EXPECT_EQ(r.type, Reply::Type::Array);
  EXPECT_TRUE(r.elements.empty());
  EXPECT_TRUE(snapshot().empty());  // not even a stats hash

  make_delayed();
  auto before = snapshot();
  EXPECT_TRUE(claim(x, q, {30000, 10, 100}).empty());
  EXPECT_EQ(snapshot(), before);
}

TEST_F(Claim, TakesAtMostMaxCount) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(enqueue_new());
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 3, 0});
  EXPECT_EQ(ids_of(jobs), (std::vector<std::string>{ids[0], ids[1], ids[2]}));
  EXPECT_EQ(members(q.pending), (std::vector<std::string>{ids[3], ids[4]}));
  EXPECT_EQ(counters()["claimed"], 3);
}

TEST_F(Claim, LowerLaneFirstThenIdByteOrder) {
  // Byte order, not case-insensitive order: 'B' (0x42) sorts before 'a' (0x61).
  struct Seed {
    const char* id;
    int lane;
  };
  for (Seed s : {Seed{"JOB_b", 0}, Seed{"JOB_a", 0}, Seed{"JOB_c", -3}, Seed{"JOB_d", 7}, Seed{"JOB_B", -3},
                 Seed{"JOB_e", 1000}, Seed{"JOB_f", -1000}, Seed{"JOB_0", 0}}) {
    ASSERT_EQ(enqueue(x, q, s.id, "p", {s.lane, std::nullopt}), EnqueueResult::Enqueued);
  }
  EXPECT_EQ(ids_of(claim(x, q, {30000, 100, 0})),
            (std::vector<std::string>{"JOB_f", "JOB_B", "JOB_c", "JOB_0", "JOB_a", "JOB_b", "JOB_d", "JOB_e"}));
}

TEST_F(Claim, MintedIdsComeOutInMintOrderWhateverTheEnqueueOrder) {
  std::vector<std::string> minted;
  for (int i = 0; i < 20; ++i) minted.push_back(mint_job_id());
  for (auto it = minted.rbegin(); it != minted.rend(); ++it)
    ASSERT_EQ(enqueue(x, q, *it, "p"), EnqueueResult::Enqueued);
  EXPECT_EQ(ids_of(claim(x, q, {30000, 100, 0})), minted);
}

TEST_F(Claim, PromotesDueDelayedJobsToPendingAtTheirLaneFirst) {
  std::int64_t now = now_ms();
  std::string urgent = enqueue_new("urgent", {-10, std::nullopt});
  std::string due = enqueue_new("due", {-5, now - 1000});
  std::string plain = enqueue_new("plain");
  // One slot: the lane -10 job takes it; the promoted job waits at lane -5,
  // ahead of the lane 0 job that was pending all along.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 10});
  EXPECT_EQ(ids_of(jobs), (std::vector<std::string>{urgent}));
  EXPECT_EQ(zset(q.delayed), ZSet{});
  EXPECT_EQ(zset(q.pending), (ZSet{{due, -5}, {plain, 0}}));
  EXPECT_EQ(row(due), (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "due"}, {"lane", "-5"}}));
  EXPECT_EQ(ids_of(claim(x, q, {30000, 1, 10})), (std::vector<std::string>{due}));
}

TEST_F(Claim, PromotesAtMostPromoteLimitEarliestDueFirst) {
  std::int64_t now = now_ms();
  std::string d3 = enqueue_new("3", {0, now - 1000});
  std::string d1 = enqueue_new("1", {0, now - 3000});
  std::string d2 = enqueue_new("2", {0, now - 2000});
  std::string future = enqueue_new("f", {0, now + 3600000});

  EXPECT_TRUE(claim(x, q, {30000, 10, 0}).empty()) << "promote_limit 0 promotes nothing";
  EXPECT_EQ(zset(q.delayed).size(), 4u);

  EXPECT_EQ(ids_of(claim(x, q, {30000, 10, 2})), (std::vector<std::string>{d1, d2}));
  EXPECT_EQ(zset(q.delayed), (ZSet{{d3, now - 1000}, {future, now + 3600000}}));
  EXPECT_EQ(ids_of(claim(x, q, {30000, 10, 2})), (std::vector<std::string>{d3}));
  EXPECT_EQ(zset(q.delayed), (ZSet{{future, now + 3600000}}));
  EXPECT_EQ(row(future).at("state"), "delayed");
}

TEST_F(Claim, PausedQueueClaimsNothingAndChangesNothing) {
  std::string waiting = enqueue_new("waiting");
  std::string due = enqueue_new("due", {0, now_ms() - 1});
  pause(x, q);
  EXPECT_EQ(hash(q.meta), (Row{{"paused", "1"}}));
  auto before = snapshot();
  Reply r = raw(claim_call(30000, 10, 10));
  EXPECT_EQ(r.type, Reply::Type::Array);
  EXPECT_TRUE(r.elements.empty());
  EXPECT_EQ(snapshot(), before) << "a paused claim must not even promote";

  resume(x, q);
  EXPECT_FALSE(exists(q.meta));
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 10, 10});
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(ids_of(jobs), (std::vector<std::string>{std::min(waiting, due), std::max(waiting, due)}));
}

TEST_F(Claim, AGoneRowIsDroppedFromPendingAndDoesNotShortenTheBatch) {
  std::string gone = enqueue_new("gone");
  std::string b = enqueue_new("b");
  std::string c = enqueue_new("c");
  cmd({"DEL", q.row_root + gone});  // as if deleted behind the queue's back
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 2, 0});
  EXPECT_EQ(ids_of(jobs), (std::vector<std::string>{b, c}));
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_EQ(members(q.active), (std::vector<std::string>{b, c}));
  EXPECT_FALSE(exists(q.row_root + gone));
  EXPECT_EQ(counters()["claimed"], 2);
}

TEST_F(Claim, ADueDelayedIdWhoseRowIsGoneIsDroppedNotPromoted) {
  std::string gone = enqueue_new("gone", {0, now_ms() - 1});
  cmd({"DEL", q.row_root + gone});
  EXPECT_TRUE(claim(x, q, {30000, 10, 10}).empty());
  EXPECT_EQ(zset(q.delayed), ZSet{});
  EXPECT_EQ(zset(q.pending), ZSet{});
  EXPECT_FALSE(exists(q.row_root + gone)) << "promotion must not resurrect a row";
}

}  // namespace
}  // namespace echomq::test

namespace echomq::test {
namespace {

// A counter claim increments, broken by another writer, is checked before
// any pop (as rows are): the claim goes on, the job is leased and in the
// active set, and the broken field is left for an operator. Before, HINCRBY
// failed after the pops and the jobs were stranded until the reaper.
class ClaimCounter : public WireTest {};

TEST_F(ClaimCounter, AClaimedCounterThatIsNotAnIntegerIsLeftAndTheClaimGoesOn) {
  std::string id = enqueue_new("p");
  cmd({"HSET", q.stats, "claimed", "lots"});
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 5, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_EQ(row(id).at("state"), "active");
  EXPECT_EQ(members(q.active), std::vector<std::string>{id});
  EXPECT_EQ(hash(q.stats).at("claimed"), "lots");
  EXPECT_EQ(complete(x, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
}

TEST_F(ClaimCounter, AStatsKeyOfTheWrongTypeIsLeftAndTheClaimGoesOn) {
  std::string id = enqueue_new("p");
  cmd({"SET", q.stats, "not a hash"});
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 5, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(members(q.active), std::vector<std::string>{id});
  EXPECT_EQ(cmd({"GET", q.stats}).str, "not a hash");
}

}  // namespace
}  // namespace echomq::test
