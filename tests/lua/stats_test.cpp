// The stats hash's six counters, each moved by the transition PROTOCOL.md
// names, and the plain reads of stats.h (depths, pause, inspect, dead list,
// the queue registry).
#include <algorithm>

#include "wire_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::seconds;

class Stats : public WireTest {};

TEST_F(Stats, EachCounterMovesWithItsTransitionAndNothingElse) {
  std::string a = enqueue_new("a");
  EXPECT_EQ(counters(), counters_with({})) << "enqueue counts nothing";

  Lease l = claim_one(a);
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}}));
  ASSERT_EQ(complete(x, q, l, 0, ""), CompleteResult::Completed);
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"completed", 1}}));

  std::string b = enqueue_new("b");
  l = claim_one(b);
  ASSERT_EQ(fail(x, q, l, {"e", 5, 0, false}), FailResult::Retry);
  EXPECT_EQ(counters(), counters_with({{"claimed", 2}, {"completed", 1}, {"retried", 1}}));
  l = claim_one(b);
  ASSERT_EQ(fail(x, q, l, {"e", 5, 0, true}), FailResult::Dead);
  EXPECT_EQ(counters(), counters_with({{"claimed", 3}, {"completed", 1}, {"retried", 1}, {"dead", 1}}));

  ASSERT_EQ(retry_dead(x, q, 10).moved, 1);
  EXPECT_EQ(counters(), counters_with({{"claimed", 3}, {"completed", 1}, {"retried", 1}, {"dead", 1}}))
      << "retry_dead counts nothing";

  l = claim_one(b);
  ASSERT_EQ(release(x, q, l), ReleaseResult::Released);
  EXPECT_EQ(counters(),
            counters_with({{"claimed", 4}, {"completed", 1}, {"retried", 1}, {"dead", 1}, {"released", 1}}));

  claim_one(b, 50);
  ASSERT_TRUE(wait_for([&] { return reap(x, q, 5, 100).requeued == 1; }, seconds(5)));
  EXPECT_EQ(
      counters(),
      counters_with({{"claimed", 5}, {"completed", 1}, {"retried", 1}, {"dead", 1}, {"released", 1}, {"reaped", 1}}));

  ASSERT_EQ(cancel(x, q, b), CancelResult::Removed);
  ASSERT_EQ(trim_dead(x, q, 0, 0), 0);
  // The raw hash holds exactly the counters that moved.
  EXPECT_EQ(
      hash(q.stats),
      (Row{{"claimed", "5"}, {"completed", "1"}, {"retried", "1"}, {"dead", "1"}, {"released", "1"}, {"reaped", "1"}}));
}

TEST_F(Stats, DepthsPauseAndHeadForSeveralQueuesInOneCall) {
  QueueKeys other(q.queue.substr(0, 58) + "-other");
  make_active();
  make_dead();
  make_delayed();
  std::string low = enqueue_new("low", {-1, std::nullopt});
  enqueue_new("zero");
  pause(x, q);
  ASSERT_EQ(enqueue(x, other, mint_job_id(), "p"), EnqueueResult::Enqueued);

  std::vector<QueueStats> all = stats(x, {q, other});
  ASSERT_EQ(all.size(), 2u);
  const QueueStats& s = all[0];
  EXPECT_EQ(s.queue, q.queue);
  EXPECT_EQ(s.pending, 2);
  EXPECT_EQ(s.active, 1);
  EXPECT_EQ(s.delayed, 1);
  EXPECT_EQ(s.dead, 1);
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.head_pending, low) << "the next claim takes the lowest lane";
  EXPECT_EQ(s.counters, counters_with({{"claimed", 2}, {"dead", 1}}));

  EXPECT_EQ(all[1].queue, other.queue);
  EXPECT_EQ(all[1].pending, 1);
  EXPECT_FALSE(all[1].paused);
  EXPECT_EQ(all[1].counters, counters_with({}));

  resume(x, q);
  EXPECT_FALSE(stats(x, q).paused);
}

TEST_F(Stats, InspectReadsTheRowOrNothing) {
  std::string id = enqueue_new("look at me", {9, std::nullopt});
  std::optional<JobRow> r = inspect(x, q, id);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->id, id);
  EXPECT_EQ(r->fields, (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "look at me"}, {"lane", "9"}}));
  EXPECT_FALSE(inspect(x, q, "JOB_nobody").has_value());
}

TEST_F(Stats, ListDeadIsOldestDeathFirstWithItsTime) {
  std::string first = make_dead();
  std::string second = make_dead();
  std::int64_t now = now_ms();
  cmd({"ZADD", q.dead, "XX", std::to_string(now - 500), second});
  cmd({"ZADD", q.dead, "XX", std::to_string(now - 100), first});
  auto dead = list_dead(x, q, 10);
  EXPECT_EQ(dead, (std::vector<std::pair<std::string, std::int64_t>>{{second, now - 500}, {first, now - 100}}));
  EXPECT_EQ(list_dead(x, q, 1).size(), 1u);
}

TEST_F(Stats, TheQueueRegistryIsASortedSet) {
  const std::string a = q.queue.substr(0, 60) + "-a", b = q.queue.substr(0, 60) + "-b";
  register_queues(x, {b, a});
  register_queues(x, {});
  std::vector<std::string> known = known_queues(x);
  EXPECT_TRUE(std::is_sorted(known.begin(), known.end()));
  EXPECT_NE(std::find(known.begin(), known.end(), a), known.end());
  EXPECT_EQ(cmd({"SISMEMBER", "{emq}:queues", b}).integer, 1);
}

}  // namespace
}  // namespace echomq::test
