// Flows through emqd, end to end: real servers, the real binary, real
// handlers of two kinds. A tree over three queues completes bottom-up with
// each parent given its children's results (pool: the "children" field;
// exec: EMQ_CHILDREN_FILE, a file with no name on descriptor 4), and
// nothing is left waiting or in an outbox.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "e2e_fixture.h"
#include "echomq/flows.h"
#include "echomq/job_actions.h"

namespace echomq::test {
namespace {

class Flows : public E2E {
 protected:
  static std::string pool_queue(const std::string& name, int keep_s = 0) {
    return "  - name: " + name + "\n    concurrency: 4\n    keep_completed_s: " + std::to_string(keep_s) +
           "\n    handler:\n      type: pool\n      command: [\"python3\", \"" EMQ_TEST_HANDLERS "/flow_pool.py\"]\n";
  }
  static std::string exec_queue(const std::string& name) {
    return "  - name: " + name +
           "\n    concurrency: 2\n    handler:\n      type: exec\n      command: [\"" EMQ_TEST_HANDLERS
           "/flow_exec.sh\"]\n";
  }
  std::int64_t zcard(const std::string& key) { return x.command({"ZCARD", key}).integer; }

  static FlowNode node(const std::string& queue, const std::string& payload) {
    FlowNode n;
    n.queue = queue;
    n.payload = payload;
    return n;
  }
};

TEST_F(Flows, AThreeLevelTreeOverThreeQueuesCompletesBottomUpWithEveryResult) {
  EmqdProcess d(config_head(server) + pool_queue("fl-root", 600) + exec_queue("fl-mid") + pool_queue("fl-leaf"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  FlowNode root = node("fl-root", "sheet");
  FlowNode m1 = node("fl-mid", "m1"), m2 = node("fl-mid", "m2");
  m1.children = {node("fl-leaf", "a"), node("fl-leaf", "b")};
  m2.children = {node("fl-leaf", "c")};
  root.children = {m1, m2};
  FlowJob ids = enqueue_flow(x, root);

  ASSERT_TRUE(wait_for([&] { return row("fl-root", ids.id)["state"] == "completed"; }, seconds(30))) << d.log();
  nlohmann::json result = nlohmann::json::parse(row("fl-root", ids.id)["result"]);
  EXPECT_EQ(result["payload"], "sheet");
  ASSERT_EQ(result["children"].size(), 2u) << result.dump();
  std::map<std::string, std::string> mids;  // mid payload -> what its exec handler printed
  for (const auto& c : result["children"]) {
    EXPECT_EQ(c["queue"], "fl-mid");
    EXPECT_EQ(c["outcome"], "completed");
    const std::string text = c["result"];
    mids[text.substr(0, 2)] = text;
  }
  ASSERT_EQ(mids.size(), 2u);
  for (const auto& [payload, text] : mids) {
    // "<payload>|<children file>|<its JSON>"
    const std::size_t bar1 = text.find('|'), bar2 = text.find('|', bar1 + 1);
    ASSERT_NE(bar2, std::string::npos) << text;
    const std::string path = text.substr(bar1 + 1, bar2 - bar1 - 1);
    EXPECT_EQ(path, "/dev/fd/4") << "a parent's exec handler has EMQ_CHILDREN_FILE: " << text;
    nlohmann::json kids = nlohmann::json::parse(text.substr(bar2 + 1));
    ASSERT_EQ(kids.size(), payload == "m1" ? 2u : 1u) << text;
    std::set<std::string> leaf_payloads;
    for (const auto& k : kids) {
      EXPECT_EQ(k["queue"], "fl-leaf");
      EXPECT_EQ(k["outcome"], "completed");
      leaf_payloads.insert(nlohmann::json::parse(std::string(k["result"]))["payload"].get<std::string>());
    }
    EXPECT_EQ(leaf_payloads, payload == "m1" ? (std::set<std::string>{"a", "b"}) : (std::set<std::string>{"c"}));
  }
  for (const char* q : {"fl-root", "fl-mid", "fl-leaf"}) {
    QueueKeys k(q);
    EXPECT_TRUE(wait_for([&] { return zcard(k.outbox) == 0; }, seconds(5))) << q << "'s outbox is not empty";
    EXPECT_EQ(zcard(k.waiting), 0) << q;
    EXPECT_EQ(completed(q), std::string(q) == "fl-root" ? 1 : std::string(q) == "fl-mid" ? 2 : 3);
  }
  EXPECT_EQ(x.command({"EXISTS", QueueKeys("fl-leaf").row(ids.children[0].children[0].id)}).integer, 0)
      << "a told child's row goes with keep_completed_s 0";
}

class FlowPolicies : public Flows {
 protected:
  void SetUp() override {
    d_ = std::make_unique<EmqdProcess>(config_head(server) + pool_queue("fp-root", 600) + pool_queue("fp-kid"));
    ASSERT_TRUE(d_->wait_ready()) << d_->log();
  }
  FlowJob two_children(const std::string& policy, const std::string& second = "die") {
    FlowNode root = node("fp-root", "root");
    root.on_child_failure = policy;
    root.children = {node("fp-kid", "ok"), node("fp-kid", second)};
    return enqueue_flow(x, root);
  }
  std::string state(const FlowJob& f) { return row("fp-root", f.id)["state"]; }
  bool reaches(const FlowJob& f, const std::string& s) {
    return wait_for([&] { return state(f) == s; }, seconds(30));
  }
  std::unique_ptr<EmqdProcess> d_;
};

TEST_F(FlowPolicies, FailKillsTheParentWithTheChildsError) {
  FlowJob f = two_children("fail");
  ASSERT_TRUE(reaches(f, "dead")) << d_->log();
  EXPECT_EQ(row("fp-root", f.id)["error"], "child fp-kid:" + f.children[1].id + " died: died: die");
  EXPECT_EQ(completed("fp-root"), 0);
  EXPECT_EQ(stats_of("fp-root").counters["dead"], 1) << "a parent's death counts as every death does";
}

TEST_F(FlowPolicies, IgnoreRunsTheParentWithTheDeadChildsError) {
  FlowJob f = two_children("ignore");
  ASSERT_TRUE(reaches(f, "completed")) << d_->log();
  nlohmann::json r = nlohmann::json::parse(row("fp-root", f.id)["result"]);
  ASSERT_EQ(r["children"].size(), 2u);
  std::multiset<std::string> outcomes{r["children"][0]["outcome"], r["children"][1]["outcome"]};
  EXPECT_EQ(outcomes, (std::multiset<std::string>{"completed", "dead"}));
  for (const auto& c : r["children"]) {
    if (c["outcome"] == "dead") {
      EXPECT_EQ(c["error"], "died: die");
    }
  }
}

TEST_F(FlowPolicies, WaitHoldsTheParentUntilTheDeadChildIsRetriedAndCompletes) {
  FlowJob f = two_children("wait");
  QueueKeys root("fp-root"), kid("fp-kid");
  ASSERT_TRUE(wait_for([&] { return x.command({"HLEN", root.results(f.id)}).integer == 2; }, seconds(30))) << d_->log();
  EXPECT_EQ(state(f), "waiting") << "a dead child under wait holds its parent";
  // The operator mends the child's input and retries it from dead.
  x.command({"HSET", kid.row(f.children[1].id), "payload", "mended"});
  ASSERT_EQ(retry_job(x, kid, f.children[1].id), RetryJobResult::Moved);
  ASSERT_TRUE(reaches(f, "completed")) << d_->log();
  nlohmann::json r = nlohmann::json::parse(row("fp-root", f.id)["result"]);
  ASSERT_EQ(r["children"].size(), 2u);
  for (const auto& c : r["children"]) EXPECT_EQ(c["outcome"], "completed") << r.dump();
}

TEST_F(FlowPolicies, ACancelledChildIsToldAsDead) {
  QueueKeys kid("fp-kid");
  x.command({"HSET", kid.meta, "paused", "1"});
  FlowJob f = two_children("fail", "ok too");
  EXPECT_EQ(cancel(x, kid, f.children[1].id), CancelResult::Removed);
  ASSERT_TRUE(reaches(f, "dead")) << d_->log();
  EXPECT_EQ(row("fp-root", f.id)["error"], "child fp-kid:" + f.children[1].id + " died: cancelled");
  EXPECT_EQ(row("fp-kid", f.children[1].id)["state"], "dead") << "kept for an operator to retry";
}

TEST_F(Flows, AChildCompletedTwiceCountsOnce) {
  FlowNode root = node("fp-root", "root");
  root.children = {node("fp-kid", "ok"), node("fp-kid", "ok too")};
  FlowJob f = enqueue_flow(x, root);
  QueueKeys kid("fp-kid");
  // A worker that takes a child and loses its lease: emqd runs it again.
  std::vector<ClaimedJob> mine = claim(x, kid, {200, 1, 0});
  ASSERT_EQ(mine.size(), 1u);
  EmqdProcess d(config_head(server) + pool_queue("fp-root", 600) + pool_queue("fp-kid"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return row("fp-root", f.id)["state"] == "completed"; }, seconds(30))) << d.log();
  // The first worker's late answer, and a repeated drain, change nothing.
  EXPECT_EQ(decode_complete(x.eval(complete_call(kid, {mine[0].id, mine[0].lease_epoch}, 0, "late", FlowMode::Flow))),
            CompleteResult::LeaseLost);
  EXPECT_EQ(decode_child_done(x.eval(
                child_done_call(QueueKeys("fp-root"), f.id, kid.ref(mine[0].id), ChildOutcome::Completed, "late"))),
            ChildDoneResult::NotInDeps);
  EXPECT_EQ(completed("fp-root"), 1);
  EXPECT_EQ(stats_of("fp-kid").counters["reaped"], 1);
  nlohmann::json r = nlohmann::json::parse(row("fp-root", f.id)["result"]);
  EXPECT_EQ(r["children"].size(), 2u);
  EXPECT_EQ(row("fp-kid", mine[0].id)["state"], "") << "told and acknowledged: gone";
}

TEST_F(FlowPolicies, AChildCompletedByAFlowUnawareSpeakerShowsAsAnOrphan) {
  // The child's queue is not this daemon's: a speaker that knows nothing
  // of flows claims it and completes it with the plain complete.
  FlowNode root = node("fp-root", "root");
  root.children = {node("fp-elsewhere", "x")};
  FlowJob f = enqueue_flow(x, root);
  QueueKeys other("fp-elsewhere");
  std::vector<ClaimedJob> mine = claim(x, other, {30000, 1, 0});
  ASSERT_EQ(mine.size(), 1u);
  ASSERT_EQ(complete(x, other, {mine[0].id, mine[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  ASSERT_TRUE(d_->wait_log("job=" + f.id + " is an orphan: it waits on child fp-elsewhere:" + mine[0].id, seconds(20)))
      << d_->log();
  EXPECT_EQ(state(f), "waiting");
}

TEST_F(Flows, APluginWithTheFlowsEntryPointGetsItsChildrensResults) {
  EmqdProcess d(config_head(server) +
                "  - name: fpl-root\n    keep_completed_s: 600\n    handler:\n      type: plugin\n"
                "      path: " EMQ_LIB_DIR "/test-plugins/libflow_parent.so\n" +
                pool_queue("fpl-kid"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  FlowNode root = node("fpl-root", "root");
  root.children = {node("fpl-kid", "k")};
  FlowJob f = enqueue_flow(x, root);
  const std::string plain = put("fpl-root", "not a parent");
  ASSERT_TRUE(wait_for([&] { return row("fpl-root", f.id)["state"] == "completed"; }, seconds(30))) << d.log();
  const std::string kid_result = R"({"payload": "k", "children": []})";
  EXPECT_EQ(row("fpl-root", f.id)["result"], "children=1;fpl-kid:" + f.children[0].id + "=c:" + kid_result);
  ASSERT_TRUE(wait_for([&] { return row("fpl-root", plain)["state"] == "completed"; }, seconds(30))) << d.log();
  EXPECT_EQ(row("fpl-root", plain)["result"], "plain");
}

// Issue 37, row 14: emqd SIGKILLed while an exec parent runs, another emqd
// finishing the job: the children's results were a named file in $TMPDIR
// that stayed for ever. Now they never have a name there.
TEST_F(Flows, AnExecParentsChildrenFileIsNeverLeftInTmpdirWhenEmqdIsKilled) {
  const std::string tmp = server.dir() + "/emqd-tmp", hold = server.dir() + "/hold";
  ASSERT_EQ(::mkdir(tmp.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(hold.c_str(), 0700), 0);
  const std::string config =
      config_head(server) +
      "  - name: fk-parent\n    lease_ms: 1500\n    keep_completed_s: 600\n    handler:\n      type: exec\n"
      "      command: [\"" EMQ_TEST_HANDLERS
      "/flow_exec_hold.sh\"]\n"
      "      env: { HOLD_DIR: \"" +
      hold + "\" }\n" + pool_queue("fk-kid");
  auto in_tmp = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(tmp)) names.push_back(e.path().filename().string());
    return names;
  };
  auto holders = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(hold)) n += e.path().filename() != "release";
    return n;
  };
  FlowNode tree = node("fk-parent", "sheet");
  tree.children = {node("fk-kid", "a"), node("fk-kid", "b")};
  FlowJob f = enqueue_flow(x, tree);
  {
    EmqdProcess first(config, {}, {"TMPDIR=" + tmp});
    ASSERT_TRUE(first.wait_ready()) << first.log();
    ASSERT_TRUE(wait_for([&] { return holders() == 1; }, seconds(30))) << first.log();
    EXPECT_EQ(in_tmp(), std::vector<std::string>{}) << "while the parent runs";
    first.signal(SIGKILL);
    ASSERT_EQ(first.wait_exit(seconds(5)), 128 + SIGKILL);
  }
  EXPECT_EQ(in_tmp(), std::vector<std::string>{}) << "after emqd was killed mid-parent";
  // The killed daemon's handler lets go; another daemon reaps the lease and
  // runs the parent again.
  std::ofstream(hold + "/release").put('\n');
  EmqdProcess second(config, {}, {"TMPDIR=" + tmp});
  ASSERT_TRUE(second.wait_ready()) << second.log();
  ASSERT_TRUE(wait_for([&] { return row("fk-parent", f.id)["state"] == "completed"; }, seconds(30))) << second.log();
  const std::string result = row("fk-parent", f.id)["result"];
  EXPECT_NE(result.find("sheet|/dev/fd/4|["), std::string::npos) << result;
  EXPECT_EQ(nlohmann::json::parse(result.substr(result.find('['))).size(), 2u) << result;
  EXPECT_EQ(in_tmp(), std::vector<std::string>{});
}

}  // namespace
}  // namespace echomq::test
