// Fair share between groups of one queue (docs/protocol.md, "Groups";
// issue 51, item 4), counted in claims on a real server, on both
// executors: the scripts, and EMQ.ENQUEUE, EMQ.CLAIM and EMQ.COMPLETE
// (group_set is a script on both).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/groups.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "keyspace_dump.h"
#include "module_server.h"
#include "valkey_server.h"

namespace echomq::test {
namespace {

class Groups : public ::testing::TestWithParam<ExecutorChoice> {
 protected:
  Groups() : server(with_module()), x(choosing(server, GetParam())), q("fair") {}

  // n jobs of group g (none for ""), each with its group in its payload;
  // 500 enqueues a round trip, so the backlogs take a second.
  void add(const std::string& g, int n) {
    EnqueueOptions o;
    o.group = g;
    std::vector<ScriptCall> calls;
    for (int i = 0; i < n; ++i) {
      calls.push_back(enqueue_call(q, mint_job_id(), g.empty() ? "-" : g, o));
      if (calls.size() < 500 && i + 1 < n) continue;
      for (const Reply& r : x.eval_batch(calls)) ASSERT_EQ(decode_enqueue(r), EnqueueResult::Enqueued);
      calls.clear();
    }
  }

  // One claim of one job: its group ("-" for none), or "" when none came.
  std::string claim_one() {
    std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
    return jobs.empty() ? "" : jobs.front().payload;
  }

  // n claims of one job each, completed at once: the groups in order.
  std::vector<std::string> claims(int n) {
    std::vector<std::string> order;
    for (int i = 0; i < n; ++i) {
      std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
      if (jobs.empty()) break;
      order.push_back(jobs.front().payload);
      EXPECT_EQ(complete(x, q, {jobs.front().id, jobs.front().lease_epoch}, 0, "ok"), CompleteResult::Completed);
    }
    return order;
  }

  ValkeyServer server;
  Executor x;
  QueueKeys q;
};

// A (weight 3) and B (weight 1) both backlogged: every window of 40
// consecutive claims holds 27 to 33 of A's (one quantum of 3 around 30).
TEST_P(Groups, WeightsSplitEveryWindowOfFortyClaimsThreeToOne) {
  ASSERT_TRUE(group_set(x, q, "A", "weight=3") == false);
  add("A", 300);
  add("B", 100);
  const std::vector<std::string> order = claims(400);
  ASSERT_EQ(order.size(), 400u);
  int worst_low = 40, worst_high = 0;
  for (std::size_t start = 0; start + 40 <= 300; ++start) {
    int a = 0;
    for (std::size_t i = start; i < start + 40; ++i) a += order[i] == "A";
    worst_low = std::min(worst_low, a);
    worst_high = std::max(worst_high, a);
  }
  EXPECT_GE(worst_low, 27) << "a window of 40 claims gave A too few";
  EXPECT_LE(worst_high, 33) << "a window of 40 claims gave A too many";
  std::printf("groups %s: A's claims in every window of 40: %d..%d (bound 27..33)\n", to_string(GetParam()), worst_low,
              worst_high);
}

// A tenant's single job enqueued behind another's backlog of 100,000 is
// claimed within the sum of the other eligible groups' weights, in claims.
TEST_P(Groups, ASmallTenantIsClaimedWithinTheOthersWeightsBehindABacklog) {
  ASSERT_FALSE(group_set(x, q, "big", "weight=5"));
  add("big", 100000);
  ASSERT_EQ(claim_one(), "big");  // big's turn is under way
  add("small", 1);
  int waited = 0;
  for (std::string g = claim_one(); g != "small"; g = claim_one()) {
    ASSERT_EQ(g, "big");
    ++waited;
    ASSERT_LE(waited, 5) << "the small tenant waited past big's weight";
  }
  std::printf("groups %s: the small tenant waited %d claims behind 100,000 (bound 5)\n", to_string(GetParam()), waited);
}

// 1,000 small tenants, one job each, enqueued after a backlog of 50,000 in
// one group: each is claimed before the backlog's 1,001st job.
TEST_P(Groups, ManySmallTenantsAreAllClaimedBeforeTheBacklogsNextTurns) {
  constexpr int kGroups = 1000;
  add("backlog", 50000);
  for (int g = 0; g < kGroups; ++g) add("t" + std::to_string(g), 1);
  int backlog_claims = 0, small_claims = 0;
  while (small_claims < kGroups) {
    const std::string g = claim_one();
    ASSERT_FALSE(g.empty());
    if (g == "backlog") {
      ++backlog_claims;
      ASSERT_LE(backlog_claims, kGroups) << "the backlog got its " << kGroups + 1 << "th job before every small tenant";
    } else {
      ++small_claims;
    }
  }
  std::printf("groups %s: %d small tenants all claimed within %d of the backlog's claims (bound %d)\n",
              to_string(GetParam()), kGroups, backlog_claims, kGroups);
}

// A paused group and a group at its cap never delay the others: each claim
// goes to a group that may run, and the held ones keep their jobs.
TEST_P(Groups, APausedOrCappedGroupNeverDelaysTheOthers) {
  add("held", 50);
  add("capped", 50);
  add("free", 20);
  add("", 20);  // group-less jobs share the rotation as one member
  // Paused, a group stays in the rotation until a claim meets it there.
  ASSERT_TRUE(group_set(x, q, "held", "paused=1"));
  ASSERT_TRUE(group_set(x, q, "capped", "max_active=2"));
  std::map<std::string, int> got;
  std::vector<ClaimedJob> running;
  for (int i = 0; i < 42; ++i) {
    std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u) << "claim " << i << " came back empty while free and ungrouped work waits";
    ++got[jobs.front().payload];
    running.push_back(jobs.front());  // nothing completes: capped stays at its cap
  }
  EXPECT_EQ(got["held"], 0);
  EXPECT_EQ(got["capped"], 2);
  EXPECT_EQ(got["free"], 20);
  EXPECT_EQ(got["-"], 20);
  // Resumed, the held group comes back; a capped job's end lets one more in.
  EXPECT_TRUE(group_set(x, q, "held", ""));
  EXPECT_EQ(claim_one(), "held");
  for (const ClaimedJob& j : running) {
    if (j.payload == "capped") {
      ASSERT_EQ(complete(x, q, {j.id, j.lease_epoch}, 0, "ok"), CompleteResult::Completed);
      break;
    }
  }
  std::map<std::string, int> next;
  for (int i = 0; i < 4; ++i) ++next[claim_one()];
  EXPECT_EQ(next["capped"], 1) << "the capped group should rejoin for exactly the one slot its job freed";
}

// An idle group holds no keys: once its last job is completed, nothing of
// it is left but the policy an operator wrote.
TEST_P(Groups, AnIdleGroupHoldsNoKeys) {
  add("once", 2);
  const std::vector<std::string> order = claims(2);
  ASSERT_EQ(order, (std::vector<std::string>{"once", "once"}));
  Connection raw = Connection::open(server.options());
  for (const auto& [key, state] : dump_keyspace(raw)) {
    EXPECT_EQ(key.find(":gq:"), std::string::npos) << key << " is left";
    EXPECT_EQ(key.find(":grp:"), std::string::npos) << key << " is left";
    EXPECT_EQ(key.find(":gact:"), std::string::npos) << key << " is left";
    EXPECT_NE(key, q.gidx) << "gidx is left";
    EXPECT_NE(key, q.rot) << "the rotation is left";
  }
}

// A grouped job retried by fail goes back to its group's zset, not to
// pending, and its count drops; released, the same; dead, it only leaves
// its count. The group's turn and caps keep holding it.
TEST_P(Groups, FailAndReleaseReturnAGroupedJobToItsGroup) {
  add("A", 1);
  ASSERT_TRUE(group_set(x, q, "A", "max_active=1"));
  Connection raw = Connection::open(server.options());
  std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 1);
  ASSERT_EQ(fail(x, q, {jobs[0].id, jobs[0].lease_epoch}, {"boom", 5, 0, false}), FailResult::Retry);
  EXPECT_EQ(raw.command({"ZCARD", q.pending}).integer, 0) << "a retried grouped job does not wait in pending";
  EXPECT_EQ(raw.command({"ZSCORE", q.gq("A"), jobs[0].id}).str, "0");
  EXPECT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 0);

  jobs = claim(x, q, {60000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u) << "the retried job is claimed from its group";
  ASSERT_EQ(release(x, q, {jobs[0].id, jobs[0].lease_epoch}), ReleaseResult::Released);
  EXPECT_EQ(raw.command({"ZSCORE", q.gq("A"), jobs[0].id}).str, "0");

  jobs = claim(x, q, {60000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(fail(x, q, {jobs[0].id, jobs[0].lease_epoch}, {"boom", 1, 0, true}), FailResult::Dead);
  EXPECT_EQ(raw.command({"EXISTS", q.gact("A"), q.gq("A"), q.grp("A")}).integer, 0) << "the idle group holds no keys";
}

// A worker that dies mid-job (its lease runs out) leaves its group's count
// right after the reap: requeued, the job is back in its group's zset and
// uncounted; dead at its last attempt, its idle group holds no keys.
TEST_P(Groups, AReapLeavesTheGroupsCountRight) {
  add("A", 1);
  Connection raw = Connection::open(server.options());
  for (const std::int64_t max_attempts : {5, 1}) {
    std::vector<ClaimedJob> jobs = claim(x, q, {1, 1, 0});  // a 1 ms lease: its worker is gone
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 1);
    ReapResult reaped;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (reaped.requeued + reaped.dead == 0 && std::chrono::steady_clock::now() < deadline) {
      reaped = reap(x, q, max_attempts, 10);  // the lease's end is the server's clock: asked until it has passed
    }
    ASSERT_EQ(reaped.requeued + reaped.dead, 1) << "the lease should have run out within 5 s";
    EXPECT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 0) << "the reaped job is no longer counted";
    if (max_attempts == 5) {
      EXPECT_EQ(reaped.requeued, 1);
      EXPECT_EQ(raw.command({"ZSCORE", q.gq("A"), jobs[0].id}).str, "0") << "requeued into its group";
      EXPECT_EQ(raw.command({"ZCARD", q.pending}).integer, 0);
    } else {
      EXPECT_EQ(reaped.dead, 1);
      EXPECT_EQ(raw.command({"EXISTS", q.gact("A"), q.gq("A"), q.grp("A")}).integer, 0);
    }
  }
}

// A row whose group field names another group than the zset it waits in
// (written by hand): each leased job is counted where its row says, in one
// claim that serves A's zset, and its end leaves no group key behind.
TEST_P(Groups, ARowNamingAnotherGroupIsCountedWhereItSays) {
  add("A", 3);
  Connection raw = Connection::open(server.options());
  const Reply ids = raw.command({"ZRANGE", q.gq("A"), "0", "-1"});
  ASSERT_EQ(ids.elements.size(), 3u);
  raw.command({"HSET", q.row(ids.elements[1].str), "group", "B"});
  raw.command({"HSET", q.row(ids.elements[2].str), "group", "C"});
  ASSERT_TRUE(group_set(x, q, "A", "weight=3"));

  std::vector<ClaimedJob> jobs = claim(x, q, {60000, 3, 0});
  ASSERT_EQ(jobs.size(), 3u) << "one turn of A serves all three";
  EXPECT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 1);
  EXPECT_EQ(raw.command({"ZSCORE", q.gact("B"), ids.elements[1].str}).type, Reply::Type::String);
  EXPECT_EQ(raw.command({"ZSCORE", q.gact("C"), ids.elements[2].str}).type, Reply::Type::String);
  for (const ClaimedJob& j : jobs) {
    EXPECT_EQ(complete(x, q, {j.id, j.lease_epoch}, 0, "ok"), CompleteResult::Completed);
  }
  for (const std::string& g : {"A", "B", "C"}) {
    EXPECT_EQ(raw.command({"EXISTS", q.gact(g), q.gq(g), q.grp(g)}).integer, 0) << g << " holds keys";
  }
  EXPECT_EQ(raw.command({"EXISTS", q.gidx, q.rot}).integer, 0);
}

// A job whose row went while it ran (an operator's DEL) is still counted
// in its capped group; enqueued again under its id, it waits in the group
// and the group stays parked at its cap: an enqueue holds no gwait.
TEST_P(Groups, AnIdEnqueuedAgainWhileCountedLeavesItsCappedGroupParked) {
  add("A", 2);
  ASSERT_TRUE(group_set(x, q, "A", "max_active=1"));
  std::vector<ClaimedJob> jobs = claim(x, q, {60000, 2, 0});
  ASSERT_EQ(jobs.size(), 1u) << "the cap lets one run";
  Connection raw = Connection::open(server.options());
  ASSERT_EQ(raw.command({"HGET", q.grp("A"), "in"}).str, "cap");
  ASSERT_EQ(raw.command({"DEL", q.row(jobs[0].id)}).integer, 1);
  EnqueueOptions o;
  o.group = "A";
  ASSERT_EQ(enqueue(x, q, jobs[0].id, "again", o), EnqueueResult::Enqueued);
  EXPECT_EQ(raw.command({"ZSCORE", q.gq("A"), jobs[0].id}).str, "0") << "it waits in its group";
  EXPECT_EQ(raw.command({"ZCARD", q.gact("A")}).integer, 0) << "and is no longer counted";
  EXPECT_EQ(raw.command({"HGET", q.grp("A"), "in"}).str, "cap");
  EXPECT_EQ(raw.command({"ZSCORE", q.gwait, "A"}).type, Reply::Type::String) << "still parked";
  EXPECT_EQ(raw.command({"LLEN", q.rot}).integer, 0) << "not in the rotation beside gwait";
}

// What `emq groups`, the page and the metrics read: the largest backlogs
// first, each with its count, policy and place, and the groups' totals.
TEST_P(Groups, TheReadShowsTheLargestBacklogsFirstWithTheirCountsAndPlaces) {
  add("big", 30);
  add("mid", 5);
  add("small", 1);
  add("", 4);
  EXPECT_FALSE(group_set(x, q, "*", "weight=2")) << "a change of the default wakes no group";
  ASSERT_TRUE(group_set(x, q, "mid", "max_active=1"));
  group_set(x, q, "small", "paused=1 weight=7");  // leaves the rotation when a claim meets it
  std::vector<ClaimedJob> jobs =
      claim(x, q, {60000, 4, 0});  // big's turn of 2, mid's one, small skipped, the ungrouped
  ASSERT_EQ(jobs.size(), 4u);

  GroupsView v = read_groups(x, q, 2);
  EXPECT_EQ(v.groups, 3);
  EXPECT_EQ(v.grouped_pending, 28 + 4 + 1);
  EXPECT_EQ(v.default_policy, "weight=2");
  const QueueStats st = stats(x, q);
  EXPECT_EQ(st.pending, 3 + 33) << "the queue's pending count takes in its groups' jobs";
  EXPECT_EQ(st.grouped_pending, 33);
  EXPECT_EQ(st.groups, 3) << "the stats count the groups holding keys, as read_groups does";
  ASSERT_EQ(v.top.size(), 2u) << "the read is bounded by its limit";
  EXPECT_EQ(v.top[0].name, "big");
  EXPECT_EQ(v.top[0].pending, 28);
  EXPECT_EQ(v.top[0].active, 2);
  EXPECT_FALSE(v.top[0].own_policy);
  ASSERT_TRUE(v.top[0].policy);
  EXPECT_EQ(v.top[0].policy->weight, 2) << "a group without its own policy runs by the default";
  EXPECT_EQ(v.top[0].place, GroupPlace::Rotation);
  EXPECT_EQ(v.top[1].name, "mid");
  EXPECT_EQ(v.top[1].active, 1);

  GroupState small = read_group(x, q, "small");
  EXPECT_EQ(small.pending, 1);
  EXPECT_EQ(small.own_policy, "paused=1 weight=7");
  ASSERT_TRUE(small.policy);
  EXPECT_TRUE(small.policy->paused);
  EXPECT_EQ(small.policy->weight, 7);
  EXPECT_EQ(group_pending_ids(x, q, "big", 0, 3).size(), 3u);
  GroupState none = read_group(x, q, "nobody");
  EXPECT_EQ(none.pending + none.active, 0);
  EXPECT_EQ(none.place, GroupPlace::Out);
  EXPECT_FALSE(none.turn);
  GroupState mid = read_group(x, q, "mid");
  EXPECT_EQ(mid.place, GroupPlace::Capped) << "mid's claim left it at its cap of 1";
  // big is the only group left in the rotation beside the ungrouped jobs.
  GroupState big = read_group(x, q, "big");
  ASSERT_TRUE(big.turn);
  EXPECT_LE(*big.turn, v.rotation);
}

// The library reads a policy exactly as group_set takes it: the same texts
// refused with the same words, the same fields kept, and its own text of a
// policy is one group_set takes back to the same policy.
TEST_P(Groups, ThePolicyReaderAgreesWithGroupSet) {
  const std::vector<std::string> texts = {"",
                                          "weight=3",
                                          "weight=1000 max_active=1",
                                          "rate_max=5 rate_window_ms=1000 paused=1",
                                          "weight=0",
                                          "weight=1001",
                                          "weight=01",
                                          "weight=+3",
                                          "weight=3 weight=4",
                                          "weight=3  max_active=2",
                                          "weight=3 ",
                                          " weight=3",
                                          "paused=0",
                                          "paused=1 paused=1",
                                          "rate_max=5",
                                          "rate_window_ms=5",
                                          "max_active=1000001",
                                          "color=red",
                                          "=3",
                                          "weight",
                                          "rate_window_ms=86400001 rate_max=1",
                                          "max_active=-1",
                                          "weight=3=4"};
  for (const std::string& text : texts) {
    std::string why;
    std::optional<GroupPolicy> p = parse_group_policy(text, &why);
    Reply r = x.eval_batch({group_set_call(q, "probe", text)}).front();
    if (p) {
      EXPECT_FALSE(r.is_error()) << "'" << text << "': " << r.str;
      group_set(x, q, "probe", policy_text(*p));
      std::optional<GroupPolicy> back = read_group(x, q, "probe").policy;
      EXPECT_EQ(back, p) << "'" << text << "' written as '" << policy_text(*p) << "'";
    } else {
      EXPECT_EQ(r.str, "EMQARG " + why) << "'" << text << "'";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothExecutors, Groups, ::testing::Values(ExecutorChoice::Scripted, ExecutorChoice::Native),
                         [](const auto& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace echomq::test
