// Flows through emqd, end to end: real servers, the real binary, real
// handlers of two kinds. A tree over three queues completes bottom-up with
// each parent given its children's results (pool: the "children" field;
// exec: EMQ_CHILDREN_FILE, removed after the job), and nothing is left
// waiting or in an outbox.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "e2e_fixture.h"
#include "echomq/flows.h"

namespace echomq::test {
namespace {

class Flows : public E2E {
 protected:
  static std::string pool_queue(const std::string& name, int keep_s = 0) {
    return "  - name: " + name + "\n    concurrency: 4\n    keep_completed_s: " + std::to_string(keep_s) +
           "\n    handler:\n      type: pool\n      command: [\"python3\", \"" EMQ_TEST_HANDLERS "/flow_pool.py\"]\n";
  }
  static std::string exec_queue(const std::string& name) {
    return "  - name: " + name + "\n    concurrency: 2\n    handler:\n      type: exec\n      command: [\"" EMQ_TEST_HANDLERS
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
    EXPECT_FALSE(path.empty()) << "a parent's exec handler has EMQ_CHILDREN_FILE: " << text;
    struct stat st;
    EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " outlived its job";
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

}  // namespace
}  // namespace echomq::test
