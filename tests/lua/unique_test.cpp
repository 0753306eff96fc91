// Unique jobs (docs/protocol.md, "Unique jobs"), through the typed API on
// either executor: one live job per key, a duplicate naming its holder,
// every ending path freeing the key in the same step (the next enqueue of
// the key is enqueued, and the lock is gone), retries that take a key back
// or stay dead, stale pointers that never block, replace and window.
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "echomq/flow_speaker.h"
#include "echomq/job_actions.h"
#include "echomq/scripts.h"
#include "echomq/unique.h"
#include "unique_options.h"
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class UniqueJobs : public WireTest {
 protected:
  // An enqueue of the key and what it met: the result and the holder.
  std::pair<EnqueueResult, KeyHolder> enqueue_key(const std::string& key, const std::string& payload = "p",
                                                  EnqueueOptions o = {}) {
    if (!o.job.unique) o.job.unique = UniqueKey{key, std::nullopt, 0};
    KeyHolder h;
    const EnqueueResult r = decode_enqueue(x.eval(enqueue_call(q, mint_job_id(), payload, o)), &h);
    return {r, h};
  }
  std::string holding(const std::string& key, EnqueueOptions o = {}) {
    std::string id = mint_job_id();
    if (!o.job.unique) o = keyed(key);
    EXPECT_EQ(enqueue(x, q, id, "first", o), EnqueueResult::Enqueued);
    return id;
  }
  // What every release path must leave: no lock, and the next enqueue of
  // the key enqueued.
  void expect_freed(const std::string& key) {
    EXPECT_FALSE(exists(q.uniq(key))) << "the lock of " << key << " was not released";
    expect_taken(key);
  }
  // The next enqueue of the key is enqueued, whatever the lock said.
  void expect_taken(const std::string& key) {
    auto [r, h] = enqueue_key(key);
    EXPECT_EQ(r, EnqueueResult::Enqueued) << key << " is still held by " << h.id << " (" << h.state << ")";
  }
  void expect_held_by(const std::string& key, const std::string& holder, const std::string& state) {
    auto [r, h] = enqueue_key(key);
    EXPECT_EQ(r, EnqueueResult::Duplicate);
    EXPECT_EQ(h.id, holder);
    EXPECT_EQ(h.state, state);
  }
};

TEST_F(UniqueJobs, ADuplicateNamesItsHolderAndWritesOnlyTheCounter) {
  const std::string holder = holding("report:42");
  EXPECT_EQ(row(holder).at("unique"), "report:42");
  EXPECT_EQ(row(holder).at("unique_mode"), "finished");
  EXPECT_EQ(cmd({"GET", q.uniq("report:42")}).str, holder);
  const auto before = snapshot();

  auto [r, h] = enqueue_key("report:42");
  EXPECT_EQ(r, EnqueueResult::Duplicate);
  EXPECT_EQ(h.id, holder);
  EXPECT_EQ(h.state, "pending");
  auto after = snapshot();
  EXPECT_EQ(after.at(q.stats), "hash: duplicates=1");
  after.erase(q.stats);
  EXPECT_EQ(after, before) << "a duplicate changes no job";
  EXPECT_EQ(counters().at("duplicates"), 1);
}

TEST_F(UniqueJobs, FinishedModeHoldsThroughPendingDelayedActiveAndEveryRetry) {
  const std::string id = holding("k");
  expect_held_by("k", id, "pending");
  Lease l = claim_one(id);
  expect_held_by("k", id, "active");
  ASSERT_EQ(fail(x, q, l, {"again", 5, 3600000, false}), FailResult::Retry);
  expect_held_by("k", id, "delayed");
  ASSERT_EQ(promote_job(x, q, id), PromoteJobResult::Moved);
  l = claim_one(id);
  ASSERT_EQ(fail(x, q, l, {"again", 5, 0, false}), FailResult::Retry);
  expect_held_by("k", id, "pending");
  EXPECT_EQ(cmd({"GET", q.uniq("k")}).str, id);
}

// The release path table: each ending transition frees the key.

TEST_F(UniqueJobs, CompleteWithKeepZeroFreesTheKey) {
  const std::string id = holding("k");
  ASSERT_EQ(complete(x, q, claim_one(id), 0, "done"), CompleteResult::Completed);
  expect_freed("k");
}

TEST_F(UniqueJobs, CompleteWithAKeptRowFreesTheKey) {
  const std::string id = holding("k");
  ASSERT_EQ(complete(x, q, claim_one(id), 600000, "done"), CompleteResult::Completed);
  EXPECT_EQ(row(id).at("state"), "completed");
  expect_freed("k");
}

TEST_F(UniqueJobs, FailToDeadFreesTheKey) {
  const std::string id = holding("k");
  ASSERT_EQ(fail(x, q, claim_one(id), {"no", 1, 0, false}), FailResult::Dead);
  expect_freed("k");
}

TEST_F(UniqueJobs, ReapToDeadFreesTheKey) {
  const std::string id = holding("k");
  claim_one(id, 1);
  ASSERT_TRUE(wait_for([&] { return reap(x, q, 1, 10).dead == 1; }, std::chrono::seconds(5)));
  EXPECT_EQ(row(id).at("state"), "dead");
  expect_freed("k");
}

TEST_F(UniqueJobs, ReapToPendingKeepsTheKey) {
  const std::string id = holding("k");
  claim_one(id, 1);
  ASSERT_TRUE(wait_for([&] { return reap(x, q, 5, 10).requeued == 1; }, std::chrono::seconds(5)));
  expect_held_by("k", id, "pending");
}

TEST_F(UniqueJobs, CancelFreesTheKey) {
  const std::string id = holding("k");
  ASSERT_EQ(cancel(x, q, id), CancelResult::Removed);
  expect_freed("k");
}

TEST_F(UniqueJobs, TrimDeadFreesAKeyItsDeadRowStillHeld) {
  // A dead row whose lock an emq/1 speaker left behind.
  const std::string id = holding("k");
  Lease l = claim_one(id);
  Reply r = x.eval({Script::Fail,
                    {q.row(id), q.active, q.delayed, q.pending, q.dead, q.stats},
                    {id, std::to_string(l.epoch), "no", "1", "0", "0"}});
  ASSERT_EQ(r.integer, 2);
  ASSERT_EQ(cmd({"GET", q.uniq("k")}).str, id) << "without the uniq root the lock stays";
  // Dead for a millisecond at least: trim_dead takes deaths before now.
  ASSERT_TRUE(wait_for([&] { return trim_dead(x, q, 0, 0) == 1; }, std::chrono::seconds(5)));
  EXPECT_FALSE(exists(q.uniq("k")));
}

TEST_F(UniqueJobs, ClaimInStartedModeFreesTheKeyAndFinishedModeDoesNot) {
  const std::string started = holding("s", keyed("s", UniqueMode::Started));
  const std::string finished = holding("f");
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 2, 0});
  ASSERT_EQ(jobs.size(), 2u);
  expect_freed("s");
  expect_held_by("f", finished, "active");
  (void)started;
}

TEST_F(UniqueJobs, AParentKilledByAChildFreesItsKey) {
  const std::string parent = mint_job_id(), child = mint_job_id();
  ScriptCall call{Script::EnqueueParent,
                  {q.row(parent), q.waiting, q.deps(parent), q.meta},
                  {parent, "p", "0", "fail", "", q.ref(child)}};
  JobOptions o;
  o.unique = UniqueKey{"parent-key", std::nullopt, 0};
  add_job_options(q, o, call.keys, call.args);
  ASSERT_EQ(decode_enqueue(x.eval(call)), EnqueueResult::Enqueued);
  expect_held_by("parent-key", parent, "waiting");
  ASSERT_EQ(decode_child_done(x.eval(child_done_call(q, parent, q.ref(child), ChildOutcome::Dead, "boom"))),
            ChildDoneResult::ParentDied);
  expect_freed("parent-key");
}

TEST_F(UniqueJobs, ACompletedChildKeptForItsParentFreesItsKey) {
  const std::string child = mint_job_id();
  ScriptCall call{Script::EnqueueChild, {q.row(child), q.pending, q.meta}, {child, "p", "0", "other:JOB_parent"}};
  JobOptions o;
  o.unique = UniqueKey{"child-key", std::nullopt, 0};
  add_job_options(q, o, call.keys, call.args);
  ASSERT_EQ(decode_enqueue(x.eval(call)), EnqueueResult::Enqueued);
  Lease l = claim_one(child);
  ASSERT_EQ(decode_complete(x.eval(complete_call(q, l, 0, "r", FlowMode::Flow))), CompleteResult::Completed);
  EXPECT_EQ(row(child).at("state"), "completed") << "kept for its parent";
  expect_freed("child-key");
}

TEST_F(UniqueJobs, RetryTakesAFreeKeyBack) {
  const std::string id = holding("k");
  ASSERT_EQ(fail(x, q, claim_one(id), {"no", 1, 0, false}), FailResult::Dead);
  ASSERT_EQ(retry_job(x, q, id), RetryJobResult::Moved);
  EXPECT_EQ(cmd({"GET", q.uniq("k")}).str, id);
  expect_held_by("k", id, "pending");
}

TEST_F(UniqueJobs, RetryOfADeadHolderWhoseKeyAnotherJobHoldsStaysDeadNamingIt) {
  const std::string dead = holding("k");
  ASSERT_EQ(fail(x, q, claim_one(dead), {"no", 1, 0, false}), FailResult::Dead);
  const std::string live = holding("k");
  std::vector<KeyHolder> holders;
  EXPECT_EQ(retry_jobs(x, q, {dead}, &holders).front(), RetryJobResult::KeyHeld);
  EXPECT_EQ(holders.front().id, live);
  EXPECT_EQ(holders.front().state, "pending");
  EXPECT_EQ(row(dead).at("state"), "dead");
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{dead}));

  const RetryDeadResult all = retry_all_dead(x, q);
  EXPECT_EQ(all.moved, 0);
  EXPECT_EQ(all.skipped, 1);
  EXPECT_EQ(row(dead).at("state"), "dead") << "two live jobs never share a key";
}

// A dead job whose key is held stays first in the dead set: retrying all
// looks past it to every other dead job, slice after slice, and counts it
// once.
TEST_F(UniqueJobs, RetryAllLooksPastAJobLeftDeadForAHeldKey) {
  const std::string dead = holding("k");
  ASSERT_EQ(fail(x, q, claim_one(dead), {"no", 1, 0, false}), FailResult::Dead);
  const std::string live = holding("k");
  const std::int64_t later = now_ms() + 1000;
  const std::int64_t others = kRetrySlice + kRetrySlice / 2;
  std::vector<Command> seed;
  for (std::int64_t i = 0; i < others; ++i) {
    const std::string id = mint_job_id();
    seed.push_back({"HSET", q.row(id), "state", "dead", "attempts", "1", "payload", "p"});
    seed.push_back({"ZADD", q.dead, std::to_string(later + i), id});
  }
  x.pipeline(seed);

  const RetryDeadResult all = retry_all_dead(x, q);
  EXPECT_EQ(all.moved, others);
  EXPECT_EQ(all.skipped, 1);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{dead}));
  expect_held_by("k", live, "pending");
}

TEST_F(UniqueJobs, AStalePointerWhoseRowWasDeletedByHandNeverBlocks) {
  const std::string id = holding("k");
  cmd({"DEL", q.row(id)});
  cmd({"ZREM", q.pending, id});
  expect_taken("k");
  EXPECT_NE(cmd({"GET", q.uniq("k")}).str, id) << "the enqueue took the lock over";
}

TEST_F(UniqueJobs, AStalePointerWhoseRowIsAStringNeverBlocks) {
  const std::string id = holding("k");
  cmd({"DEL", q.row(id)});
  cmd({"SET", q.row(id), "not a row"});
  auto [r, h] = enqueue_key("k");
  EXPECT_EQ(r, EnqueueResult::Enqueued);
}

TEST_F(UniqueJobs, AKeptCompletedRowNeverBlocksEvenWhenItsLockWasLeft) {
  const std::string id = holding("k");
  Lease l = claim_one(id);
  // Completed by a speaker that does not pass the uniq root: the lock stays.
  ASSERT_EQ(
      x.eval({Script::Complete, {q.row(id), q.active, q.stats}, {id, std::to_string(l.epoch), "600000", "r"}}).integer,
      1);
  ASSERT_EQ(cmd({"GET", q.uniq("k")}).str, id);
  auto [r, h] = enqueue_key("k");
  EXPECT_EQ(r, EnqueueResult::Enqueued) << "held by " << h.id;
}

TEST_F(UniqueJobs, ReplaceGivesAPendingOrDelayedHolderTheLatestPayloadAndDueTime) {
  const std::int64_t soon = now_ms() + 3600000;
  EnqueueOptions o = keyed("sync", UniqueMode::Replace);
  o.due_ms = soon;
  const std::string id = holding("sync", o);
  o.due_ms = soon + 5000;
  auto [r, h] = enqueue_key("sync", "v2", o);
  EXPECT_EQ(r, EnqueueResult::Replaced);
  EXPECT_EQ(h.id, id);
  EXPECT_EQ(h.state, "delayed");
  EXPECT_EQ(row(id).at("payload"), "v2");
  EXPECT_EQ(zset(q.delayed), (ZSet{{id, soon + 5000}}));
  EXPECT_EQ(counters().at("replaced"), 1);

  ASSERT_EQ(promote_job(x, q, id), PromoteJobResult::Moved);
  claim_one(id);
  auto [r2, h2] = enqueue_key("sync", "v3", keyed("sync", UniqueMode::Replace));
  EXPECT_EQ(r2, EnqueueResult::Duplicate) << "a running holder has its payload already";
  EXPECT_EQ(row(id).at("payload"), "v2");
}

// Debounce under a race: eight producers, half through the scripts and
// half through the module, replace one delayed holder's payload 4,000
// times. Each enqueue runs in a MULTI after an INCR and before a read of
// the holder's payload, so each replace is seen to take effect and the
// server's order of them is known: one job is left, the holder, with the
// payload and due time of the last replace the server ran.
TEST_F(UniqueJobs, ReplaceUnderARaceKeepsOneJobWithTheLastPayload) {
  const std::int64_t base = now_ms() + 3600000;
  EnqueueOptions o = keyed("debounce", UniqueMode::Replace);
  o.due_ms = base;
  const std::string holder = holding("debounce", o);
  const std::string order = q.queue + ":order";  // the test's own counter
  struct Replace {
    std::int64_t order = 0;
    std::string payload;
    std::int64_t due_ms = 0;
    std::int64_t code = -1;
    std::string holder;
    std::string payload_after;
  };
  const int kProducers = 8, kEach = 500;
  std::mutex m;
  std::vector<Replace> done;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      Executor on(server().options());
      std::mt19937 rng(static_cast<unsigned>(p));
      std::vector<Replace> mine;
      for (int i = 0; i < kEach; ++i) {
        Replace r;
        r.payload = "p" + std::to_string(p) + "-" + std::to_string(i);
        r.due_ms = base + std::uniform_int_distribution<std::int64_t>(1, 1000000)(rng);
        EnqueueOptions e = keyed("debounce", UniqueMode::Replace);
        e.due_ms = r.due_ms;
        const ScriptCall call = enqueue_call(q, mint_job_id(), r.payload, e);
        Command c = p % 2 == 0 ? Command{"EVAL", script_source(Script::Enqueue)} : Command{"EMQ.ENQUEUE"};
        c.push_back(std::to_string(call.keys.size()));
        c.insert(c.end(), call.keys.begin(), call.keys.end());
        c.insert(c.end(), call.args.begin(), call.args.end());
        // The holder's payload read in the same step: this replace's.
        const Reply exec =
            on.pipeline({{"MULTI"}, {"INCR", order}, c, {"HGET", q.row(holder), "payload"}, {"EXEC"}}).back();
        if (exec.elements.size() == 3 && exec.elements[1].elements.size() == 3) {
          r.order = exec.elements[0].integer;
          r.code = exec.elements[1].elements[0].integer;
          r.holder = exec.elements[1].elements[1].str;
          r.payload_after = exec.elements[2].str;
        }
        mine.push_back(std::move(r));
      }
      std::lock_guard<std::mutex> lock(m);
      done.insert(done.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : producers) t.join();

  ASSERT_EQ(done.size(), static_cast<std::size_t>(kProducers * kEach));
  const Replace* last = &done.front();
  for (const Replace& r : done) {
    EXPECT_EQ(r.code, 2) << r.payload << " was not a replace";
    EXPECT_EQ(r.holder, holder);
    EXPECT_EQ(r.payload_after, r.payload) << "the replace did not give the holder its payload";
    if (r.order > last->order) last = &r;
  }
  EXPECT_EQ(members(q.pending), std::vector<std::string>{});
  EXPECT_EQ(zset(q.delayed), (ZSet{{holder, last->due_ms}})) << "one job, due when the last replace said";
  EXPECT_EQ(cmd({"KEYS", q.row_root + "*"}).elements.size(), 1u) << "no other row was written";
  EXPECT_EQ(row(holder).at("payload"), last->payload);
  EXPECT_EQ(counters().at("replaced"), kProducers * kEach);
  EXPECT_EQ(cmd({"GET", q.uniq("debounce")}).str, holder);
}

TEST_F(UniqueJobs, AWindowRefusesWithinItAndAcceptsAfterOnTheServersClock) {
  const std::string id = holding("w", keyed("w", std::nullopt, 400));
  EXPECT_EQ(row(id).at("unique_mode"), "window");
  EXPECT_GT(pttl(q.uniq("w")), 0);
  ASSERT_EQ(complete(x, q, claim_one(id), 0, ""), CompleteResult::Completed);
  expect_held_by("w", id, "gone");  // a window holds whatever its job did
  // The window ends by the server's clock (the lock's PX), not ours.
  ASSERT_TRUE(wait_for([&] { return !exists(q.uniq("w")); }, std::chrono::seconds(5)));
  auto [r, h] = enqueue_key("w", "p", keyed("w", std::nullopt, 400));
  EXPECT_EQ(r, EnqueueResult::Enqueued);
}

TEST_F(UniqueJobs, ReadUniqueLockTellsHeldFreeAndStale) {
  EXPECT_EQ(describe(read_unique_lock(x, q, "k")), "free");
  const std::string id = holding("k");
  UniqueLock l = read_unique_lock(x, q, "k");
  EXPECT_TRUE(l.held);
  EXPECT_EQ(l.points_at, id);
  EXPECT_EQ(l.holder_mode, "finished");
  cmd({"DEL", q.row(id)});
  l = read_unique_lock(x, q, "k");
  EXPECT_FALSE(l.held);
  EXPECT_NE(describe(l).find("stale pointer"), std::string::npos) << describe(l);
}

TEST_F(UniqueJobs, BadOptionsAreRefusedHostSideBeforeAnythingIsSent) {
  for (const UniqueKey& u : {UniqueKey{"", std::nullopt, 0}, UniqueKey{"a b", std::nullopt, 0},
                             UniqueKey{std::string(129, 'k'), std::nullopt, 0}, UniqueKey{"k", UniqueMode::Window, 0},
                             UniqueKey{"k", UniqueMode::Started, 5}}) {
    EnqueueOptions o;
    o.job.unique = u;
    EXPECT_THROW(enqueue_call(q, mint_job_id(), "p", o), Error) << u.key;
  }
  EnqueueOptions t;
  t.job.traceparent = "00-short";
  EXPECT_THROW(enqueue_call(q, mint_job_id(), "p", t), Error);
}

}  // namespace
}  // namespace echomq::test
