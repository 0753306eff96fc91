// lib's flow API (echomq/flows.h and transitions.h's FlowMode) against a
// real server: enqueue_flow writes a tree parent first, the flows flag is
// read behind a claim in one round trip, complete/fail/cancel pick their
// flow twins, and the typed child_done/outbox_ack/results carry a tree to
// its root. Runs on both executors (native.* too).
#include <functional>

#include "echomq/claim_meta.h"
#include "echomq/flow_tools.h"
#include "echomq/flows.h"
#include "echomq/job_actions.h"
#include "flow_fixture.h"

namespace echomq::test {
namespace {

class FlowApi : public FlowTest {
 protected:
  // Claims one job from `in` and reads the flag behind the claim, as the
  // daemon does.
  std::pair<std::vector<ClaimedJob>, FlowMode> claim_with_flag(const QueueKeys& in) {
    std::vector<Reply> r = x.eval_batch({claim_call(in, {30000, 10, 0})}, {claim_meta_read(in)});
    EXPECT_EQ(r.size(), 2u);
    return {decode_claim(std::move(r[0])), decode_claim_meta(r[1]).flows};
  }

  // Drains `in`'s outbox through the typed calls; the child_done answers.
  std::vector<ChildDoneResult> drain_typed(const QueueKeys& in) {
    std::vector<ChildDoneResult> told;
    for (const std::string& id : members(in.outbox)) {
      Row child = hash(in.row_root + id);
      auto parent = parse_ref(child["parent"]);
      EXPECT_TRUE(parent.has_value()) << id;
      if (!parent) continue;
      const bool done = child["state"] == "completed";
      told.push_back(decode_child_done(x.eval(echomq::child_done_call(
          QueueKeys(parent->queue), parent->id, in.ref(id), done ? ChildOutcome::Completed : ChildOutcome::Dead,
          done ? child["result"] : child["error"]))));
      EXPECT_TRUE(decode_outbox_ack(x.eval(echomq::outbox_ack_call(in, id, 0))));
    }
    return told;
  }

  // Runs every job of `in` to completion with result "<payload> done".
  void complete_all(const QueueKeys& in) {
    auto [jobs, mode] = claim_with_flag(in);
    EXPECT_EQ(mode, FlowMode::Flow) << in.queue;
    for (const ClaimedJob& j : jobs) {
      Reply r = x.eval(complete_call(in, {j.id, j.lease_epoch}, 0, j.payload + " done", mode));
      EXPECT_EQ(decode_complete(r), CompleteResult::Completed);
    }
  }
};

FlowNode leaf(const std::string& queue, const std::string& payload) {
  FlowNode n;
  n.queue = queue;
  n.payload = payload;
  return n;
}

TEST_F(FlowApi, AThreeLevelTreeOverThreeQueuesCompletesBottomUpWithEveryResult) {
  QueueKeys mid = queue("m"), leaves = queue("l");
  FlowNode root = leaf(q.queue, "sheet");
  FlowNode m1 = leaf(mid.queue, "m1"), m2 = leaf(mid.queue, "m2");
  m1.children = {leaf(leaves.queue, "a"), leaf(leaves.queue, "b")};
  m2.children = {leaf(leaves.queue, "c")};
  m2.lane = 5;
  root.children = {m1, m2};
  FlowJob ids = enqueue_flow(x, root);
  ASSERT_EQ(ids.children.size(), 2u);
  EXPECT_EQ(ids.result, EnqueueResult::Enqueued);
  EXPECT_EQ(row(ids.id).at("state"), "waiting");
  EXPECT_EQ(hash(mid.row(ids.children[0].id)).at("parent"), q.ref(ids.id));
  EXPECT_EQ(hash(mid.row(ids.children[1].id)).at("lane"), "5");
  EXPECT_EQ(hash(leaves.row(ids.children[1].children[0].id)).at("parent"), mid.ref(ids.children[1].id));

  // The leaves: three children told, two parents released.
  complete_all(leaves);
  std::vector<ChildDoneResult> told = drain_typed(leaves);
  std::sort(told.begin(), told.end());
  EXPECT_EQ(told, (std::vector<ChildDoneResult>{ChildDoneResult::Recorded, ChildDoneResult::Released,
                                                ChildDoneResult::Released}));
  std::vector<ChildResult> r1 = decode_results(cmd(results_read(mid, ids.children[0].id)));
  ASSERT_EQ(r1.size(), 2u);
  for (const ChildResult& c : r1) {
    EXPECT_EQ(c.queue, leaves.queue);
    EXPECT_EQ(c.outcome, ChildOutcome::Completed);
  }
  std::vector<std::string> texts{r1[0].text, r1[1].text};
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(texts, (std::vector<std::string>{"a done", "b done"}));
  EXPECT_TRUE(members(leaves.pending).empty());

  // The middle: both told to the root, which is released.
  complete_all(mid);
  told = drain_typed(mid);
  std::sort(told.begin(), told.end());
  EXPECT_EQ(told, (std::vector<ChildDoneResult>{ChildDoneResult::Recorded, ChildDoneResult::Released}));
  std::vector<ChildResult> top = decode_results(cmd(results_read(q, ids.id)));
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].text + "," + top[1].text,
            ids.children[0].id < ids.children[1].id ? "m1 done,m2 done" : "m2 done,m1 done");
  FlowView shown = read_flow(x, q, ids.id);
  EXPECT_EQ(shown.state, "pending");
  ASSERT_EQ(shown.children.size(), 2u);
  EXPECT_EQ(shown.children[0].state, "") << "a child told and acknowledged (keep 0) is gone";
  EXPECT_TRUE(shown.recorded[0].has_value());
  EXPECT_FALSE(shown.awaited[0]);

  complete_all(q);
  EXPECT_TRUE(members(q.outbox).empty());
  for (const QueueKeys* in : {&q, &mid, &leaves}) {
    for (const auto& [key, text] : snapshot(*in)) {
      EXPECT_TRUE(key == in->meta || key == in->stats) << key << " is left: " << text;
    }
  }
}

// A flow is one trace: a node without a context of its own carries its
// parent's (traceparent and tracestate both), down every level; a node
// given its own keeps it, and its children carry that one.
TEST_F(FlowApi, AChildCarriesItsParentsTraceContextUnlessGivenItsOwn) {
  const std::string root_tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::string own_tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  QueueKeys mid = queue("m"), leaves = queue("l");
  FlowNode root = leaf(q.queue, "sheet");
  root.job.traceparent = root_tp;
  root.job.tracestate = "vendor=1";
  FlowNode m1 = leaf(mid.queue, "m1"), m2 = leaf(mid.queue, "m2");
  m1.children = {leaf(leaves.queue, "a")};
  m2.job.traceparent = own_tp;
  m2.children = {leaf(leaves.queue, "b")};
  root.children = {m1, m2};
  FlowJob ids = enqueue_flow(x, root);

  auto context = [&](const QueueKeys& in, const std::string& id) {
    Row r = hash(in.row(id));
    return r["traceparent"] + " " + r["tracestate"];
  };
  EXPECT_EQ(context(q, ids.id), root_tp + " vendor=1");
  EXPECT_EQ(context(mid, ids.children[0].id), root_tp + " vendor=1");
  EXPECT_EQ(context(leaves, ids.children[0].children[0].id), root_tp + " vendor=1");
  EXPECT_EQ(context(mid, ids.children[1].id), own_tp + " ") << "its own context, and not the parent's tracestate";
  EXPECT_EQ(context(leaves, ids.children[1].children[0].id), own_tp + " ");

  // A tree with no context writes none.
  FlowNode plain = leaf(q.queue, "plain");
  plain.children = {leaf(mid.queue, "c")};
  FlowJob p = enqueue_flow(x, plain);
  EXPECT_EQ(hash(mid.row(p.children[0].id)).count("traceparent"), 0u);
}

// A tree's groups (docs/protocol.md, "The enqueues"): a grouped leaf waits
// in its group's zset, a grouped parent carries its group in its row and
// its last child's news sends it to its group; once the tree is done no
// group holds a key.
TEST_F(FlowApi, EachNodeOfATreeTakesItsTurnInItsOwnGroup) {
  FlowNode root = leaf(q.queue, "report");
  root.group = "cust.7";
  FlowNode a = leaf(q.queue, "a");
  a.group = "cust.42";
  a.lane = 3;
  root.children = {a, leaf(q.queue, "b")};
  FlowJob ids = enqueue_flow(x, root);
  const std::string id_a = ids.children[0].id, id_b = ids.children[1].id;
  EXPECT_EQ(members(q.gq("cust.42")), std::vector<std::string>{id_a});
  EXPECT_EQ(members(q.pending), std::vector<std::string>{id_b});
  EXPECT_EQ(hash(q.row(id_a))["group"], "cust.42");
  EXPECT_EQ(hash(q.row(ids.id))["group"], "cust.7");
  EXPECT_EQ(hash(q.row(ids.id))["state"], "waiting");
  EXPECT_TRUE(members(q.gq("cust.7")).empty()) << "a waiting parent is in no group's zset";

  complete_all(q);  // the grouped child from its group's turn, the plain one from pending
  EXPECT_TRUE(members(q.gact("cust.42")).empty());
  std::vector<ChildDoneResult> told = drain_typed(q);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0] == ChildDoneResult::Released || told[1] == ChildDoneResult::Released, true);
  EXPECT_EQ(members(q.gq("cust.7")), std::vector<std::string>{ids.id}) << "released to its group";
  EXPECT_TRUE(members(q.pending).empty());

  auto [jobs, mode] = claim_with_flag(q);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, ids.id) << "the released parent is claimed from its group's turn";
  EXPECT_EQ(members(q.gact("cust.7")), std::vector<std::string>{ids.id}) << "and counted there";
  EXPECT_EQ(decode_complete(x.eval(complete_call(q, {ids.id, jobs[0].lease_epoch}, 0, "done", mode))),
            CompleteResult::Completed);
  for (const auto& [key, value] : snapshot()) {
    for (const char* part : {":gq:", ":grp:", ":gact:", ":gidx", ":rot"}) {
      EXPECT_EQ(key.find(part), std::string::npos) << key << " is left once every group is idle";
    }
  }
  FlowNode bad = leaf(q.queue, "p");
  bad.children = {leaf(q.queue, "a")};
  bad.children[0].group = "a b";
  EXPECT_THROW(enqueue_flow(x, bad), Error);
}

// A page bounds a wide tree by the jobs it reads: past max_nodes the rest
// are listed cut, never read, and a parent read still lists them all.
TEST_F(FlowApi, ReadFlowReadsAtMostMaxNodesAndMarksTheRestCut) {
  QueueKeys mid = queue("m"), leaves = queue("l");
  FlowNode root = leaf(q.queue, "root");
  for (int i = 0; i < 3; ++i) {
    FlowNode m = leaf(mid.queue, "m" + std::to_string(i));
    m.children = {leaf(leaves.queue, "a"), leaf(leaves.queue, "b")};
    root.children.push_back(m);
  }
  const FlowJob ids = enqueue_flow(x, root);
  std::size_t read = 0, cut = 0;
  std::function<void(const FlowView&)> count = [&](const FlowView& v) {
    if (v.cut == FlowCut::Nodes) {
      ++cut;
      EXPECT_FALSE(v.found) << "a cut job is not read";
    } else {
      ++read;
      EXPECT_TRUE(v.found) << v.queue << ":" << v.id;
    }
    for (const FlowView& c : v.children) count(c);
  };
  count(read_flow(x, q, ids.id, 16, 5));
  EXPECT_EQ(read, 5u);
  EXPECT_EQ(cut, 5u);
  read = cut = 0;
  count(read_flow(x, q, ids.id));
  EXPECT_EQ(read, 10u) << "unbounded by default";
  EXPECT_EQ(cut, 0u);
}

TEST_F(FlowApi, TheFlagBehindAClaimIsPlainUntilAFlowTouchesTheQueue) {
  enqueue_new();
  auto [jobs, mode] = claim_with_flag(q);
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_EQ(mode, FlowMode::Plain);
  FlowNode root = leaf(queue("p").queue, "p");
  root.children = {leaf(q.queue, "kid")};
  enqueue_flow(x, root);
  std::tie(jobs, mode) = claim_with_flag(q);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].payload, "kid");
  EXPECT_EQ(mode, FlowMode::Flow);
}

TEST_F(FlowApi, FlowModePicksTheFlowTwinsAndPlainKeepsTheCoreTransitions) {
  QueueKeys k("k");
  Lease l{"JOB_1", 3};
  EXPECT_EQ(complete_call(k, l, 0, "r").script, Script::Complete);
  EXPECT_EQ(complete_call(k, l, 0, "r", FlowMode::Flow).script, Script::CompleteFlow);
  // Their KEYS, the group block, and the uniq root last (docs/protocol.md,
  // "Release", "Groups").
  EXPECT_EQ(complete_call(k, l, 0, "r", FlowMode::Flow).keys.size(), 6u + 7u + 1u);
  EXPECT_EQ(complete_call(k, l, 0, "r", FlowMode::Flow).keys.back(), k.uniq_root);
  FailArgs f;
  EXPECT_EQ(fail_call(k, l, f).script, Script::Fail);
  EXPECT_EQ(fail_call(k, l, f, FlowMode::Flow).script, Script::FailFlow);
  // Its nine, the group block, the uniq root (docs/protocol.md, "Groups").
  EXPECT_EQ(fail_call(k, l, f, FlowMode::Flow).keys.size(), 9u + 7u + 1u);
  EXPECT_EQ(cancel_call(k, "JOB_1").keys,
            (std::vector<std::string>{k.row("JOB_1"), k.pending, k.delayed, k.dead, k.outbox, k.waiting,
                                      k.deps("JOB_1"), k.results("JOB_1"), k.gq_root, k.grp_root, k.gact_root, k.gidx,
                                      k.rot, k.groups, k.gwait, k.uniq_root}))
      << "an operator's cancel tells a child's parent, removes a waiting parent, and takes a job out of its group";
  EXPECT_EQ(cancel_call(k, "JOB_1", FlowMode::Plain).keys.size(), 4u + 7u + 1u);
}

TEST_F(FlowApi, AChildDyingUnderFailKillsItsParentThroughFailFlow) {
  QueueKeys kids = queue("k");
  FlowNode root = leaf(q.queue, "p");
  root.children = {leaf(kids.queue, "a"), leaf(kids.queue, "b")};
  FlowJob ids = enqueue_flow(x, root);
  auto [jobs, mode] = claim_with_flag(kids);
  ASSERT_EQ(jobs.size(), 2u);
  FailArgs f;
  f.error = "boom";
  f.permanent = true;
  EXPECT_EQ(decode_fail(x.eval(fail_call(kids, {jobs[0].id, jobs[0].lease_epoch}, f, mode))), FailResult::Dead);
  EXPECT_EQ(drain_typed(kids), (std::vector<ChildDoneResult>{ChildDoneResult::ParentDied}));
  EXPECT_EQ(row(ids.id).at("state"), "dead");
  EXPECT_EQ(row(ids.id).at("error"), "child " + kids.ref(jobs[0].id) + " died: boom");
}

TEST_F(FlowApi, CancelTellsTheParentAndDeletingADeadChildDeletesIt) {
  QueueKeys kids = queue("k");
  FlowNode root = leaf(q.queue, "p");
  root.on_child_failure = "ignore";
  root.children = {leaf(kids.queue, "a")};
  FlowJob ids = enqueue_flow(x, root);
  const std::string child = ids.children[0].id;
  EXPECT_EQ(cancel(x, kids, child), CancelResult::Removed);
  EXPECT_EQ(hash(kids.row(child)).at("state"), "dead");
  EXPECT_EQ(drain_typed(kids), (std::vector<ChildDoneResult>{ChildDoneResult::Released}));
  EXPECT_EQ(decode_results(cmd(results_read(q, ids.id))).at(0).text, "cancelled");
  EXPECT_EQ(delete_dead_jobs(x, kids, {child}), (std::vector<bool>{true}));
  EXPECT_FALSE(exists(kids.row(child)));
}

TEST_F(FlowApi, ReapSendsAnExpiredChildToTheOutbox) {
  QueueKeys kids = queue("k");
  FlowNode root = leaf(q.queue, "p");
  root.children = {leaf(kids.queue, "a")};
  FlowJob ids = enqueue_flow(x, root);
  ASSERT_EQ(claim(x, kids, {1, 1, 0}).size(), 1u);
  ASSERT_TRUE(wait_for([&] { return now_ms() > score(kids.active, ids.children[0].id); }, std::chrono::seconds(5)));
  EXPECT_EQ(reap(x, kids, 1, 10).dead, 1);
  EXPECT_EQ(members(kids.outbox), (std::vector<std::string>{ids.children[0].id}));
}

TEST_F(FlowApi, ABadTreeIsRefusedWholeNamingTheNode) {
  FlowNode root = leaf(q.queue, "p");
  root.children = {leaf(q.queue, "a"), leaf("bad queue", "b")};
  try {
    enqueue_flow(x, root);
    FAIL() << "a bad queue name was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("root.children[1]"), std::string::npos) << e.what();
  }
  root.children[1] = leaf(q.queue, "b");
  root.children[1].on_child_failure = "explode";
  EXPECT_THROW(enqueue_flow(x, root), Error);
  EXPECT_TRUE(snapshot().empty()) << "nothing written";
}

// Issue 37, row 9: a parent whose child has its own ref (or a job under two
// parents) would wait for ever; the tree is refused before anything is sent.
TEST_F(FlowApi, AJobGivenTwiceAnywhereInTheTreeIsRefusedBeforeAnythingIsSent) {
  QueueKeys kids = queue("k");
  FlowNode root = leaf(q.queue, "p");
  root.id = "JOB_parent";
  FlowNode self = leaf(q.queue, "me again");
  self.id = root.id;
  root.children = {leaf(kids.queue, "a"), self};
  try {
    enqueue_flow(x, root);
    FAIL() << "a child with its parent's ref was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("root.children[1]: " + q.ref("JOB_parent") +
                                         " is given twice in the tree "
                                         "(first at root)"),
              std::string::npos)
        << e.what();
  }
  FlowNode a = leaf(kids.queue, "a"), b = leaf(kids.queue, "b");
  a.children = {leaf(kids.queue, "shared")};
  a.children[0].id = "JOB_shared";
  b.children = {leaf(kids.queue, "other"), a.children[0]};
  root = leaf(q.queue, "p");
  root.children = {a, b};
  try {
    enqueue_flow(x, root);
    FAIL() << "one job under two parents was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("root.children[1].children[1]: " + kids.ref("JOB_shared") +
                                         " is given twice in the tree (first at root.children[0].children[0])"),
              std::string::npos)
        << e.what();
  }
  b.children[1].queue = q.queue;  // the same id in another queue is another job
  root.children = {a, b};
  EXPECT_NO_THROW(enqueue_flow(x, root));
  EXPECT_TRUE(exists(kids.row("JOB_shared")));
  EXPECT_TRUE(exists(q.row("JOB_shared")));
}

// Issue 37, row 10: a chain of kMaxFlowDepth levels is enqueued; one level
// more is refused by name before anything is sent.
TEST_F(FlowApi, ATreeOf64LevelsIsEnqueuedAndOneOf65IsRefused) {
  auto chain = [&](int levels) {
    FlowNode top = leaf(q.queue, "level 1");
    FlowNode* at = &top;
    for (int level = 2; level <= levels; ++level) {
      at->children = {leaf(q.queue, "level " + std::to_string(level))};
      at = &at->children[0];
    }
    return top;
  };
  try {
    enqueue_flow(x, chain(kMaxFlowDepth + 1));
    FAIL() << "65 levels were taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("].children[0]: the tree is deeper than 64 levels"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(snapshot().empty()) << "nothing written";
  FlowJob ids = enqueue_flow(x, chain(kMaxFlowDepth));
  const FlowJob* at = &ids;
  int levels = 1;
  for (; !at->children.empty(); at = &at->children[0]) ++levels;
  EXPECT_EQ(levels, 64);
  EXPECT_EQ(row(at->id).at("state"), "pending");
  EXPECT_EQ(row(ids.id).at("state"), "waiting");
}

// Issue 37, row 11: a payload the server would refuse (proto-max-bulk-len,
// here lowered to its least) stops the tree before its first call.
TEST_F(FlowApi, APayloadOverTheServersLimitIsRefusedBeforeAnythingIsSent) {
  ASSERT_FALSE(cmd({"CONFIG", "SET", "proto-max-bulk-len", "1048576"}).is_error());
  FlowNode root = leaf(q.queue, "p");
  root.children = {leaf(q.queue, "small"), leaf(q.queue, std::string(1048577, 'x'))};
  try {
    enqueue_flow(x, root);
    ADD_FAILURE() << "a payload over the limit was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("root.children[1]: the payload of 1048577 bytes is over the server's limit "
                                         "of 1048576 bytes (proto-max-bulk-len)"),
              std::string::npos)
        << e.what();
  }
  cmd({"CONFIG", "SET", "proto-max-bulk-len", "536870912"});
  EXPECT_TRUE(snapshot().empty()) << "nothing written";
  EXPECT_NO_THROW(enqueue_flow(x, root)) << "within the server's limit again";
}

// Issue 37, row 11: a call the server refuses half-way (a key some other
// writer broke) skips its subtree; the rest goes in, and the error names
// the parent left waiting and the command that cancels it.
TEST_F(FlowApi, AServerRefusalHalfWayNamesTheParentLeftWaitingAndHowToCancelIt) {
  QueueKeys broken = queue("b"), kids = queue("k");
  cmd({"SET", broken.pending, "not a zset"});
  FlowNode root = leaf(q.queue, "p");
  FlowNode mid = leaf(kids.queue, "mid");
  mid.children = {leaf(broken.queue, "refused"), leaf(kids.queue, "fine")};
  root.children = {mid, leaf(kids.queue, "sibling")};
  mid.id = "JOB_mid";
  root.children[0] = mid;
  try {
    enqueue_flow(x, root);
    FAIL() << "a refusal half-way went unsaid";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the server refused " + broken.queue + ":JOB_"), std::string::npos) << what;
    EXPECT_NE(what.find("WRONGTYPE"), std::string::npos) << what;
    EXPECT_NE(what.find("these parents now wait for a child that was not enqueued: " + kids.ref("JOB_mid") +
                        ". Cancel each (emq cancel QUEUE ID, e.g. emq cancel " + kids.queue + " JOB_mid)"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(hash(kids.row("JOB_mid")).at("state"), "waiting");
  EXPECT_EQ(members(kids.pending).size(), 2u) << "the sibling and the refused job's sibling went in";
  EXPECT_EQ(cancel(x, kids, "JOB_mid"), CancelResult::Removed) << "the parent left waiting can be cancelled";
}

}  // namespace
}  // namespace echomq::test
