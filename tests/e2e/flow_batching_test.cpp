// Telling parents in batches, through emqd (issue 41). A parent of 1,000
// children gets every child's result, told in far fewer children_done
// calls than there are children (the drainer tells a parent once per
// round, of all its children that finished meanwhile). The calls are
// counted from INFO commandstats: children_done calls SCARD once per call
// and child_done once per child it applies; no other script calls it,
// which a test checks too, so the count cannot drift unseen. And a parent
// enqueued by a producer older than meta's `parents` flag still runs with
// its children's results.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "e2e_fixture.h"
#include "echomq/flows.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

class FlowBatching : public E2E {
 protected:
  static std::string pool_queue(const std::string& name, int concurrency, int keep_s) {
    return "  - name: " + name + "\n    concurrency: " + std::to_string(concurrency) +
           "\n    keep_completed_s: " + std::to_string(keep_s) +
           "\n    handler:\n      type: pool\n      command: [\"python3\", \"" EMQ_TEST_HANDLERS "/flow_pool.py\"]\n";
  }
};

TEST_F(FlowBatching, TheScriptsThatCallScardAreTheTwoThatTellParents) {
  std::set<std::string> callers;
  for (const auto& entry : fs::directory_iterator(fs::path(EMQ_SOURCE_DIR) / "lua")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("'SCARD'") != std::string::npos) callers.insert(entry.path().stem().string());
  }
  EXPECT_EQ(callers, (std::set<std::string>{"child_done", "children_done"}));
}

TEST_F(FlowBatching, AParentOfAThousandChildrenHasEveryResultFromFewerThanAThousandCalls) {
  const int kChildren = 1000;
  FlowNode root;
  root.queue = "ft-root";
  root.payload = "root";
  for (int i = 0; i < kChildren; ++i) {
    FlowNode child;
    child.queue = "ft-kid";
    child.payload = "c" + std::to_string(i);
    root.children.push_back(child);
  }
  const FlowJob flow = enqueue_flow(x, root);
  const std::int64_t before = server.calls("scard");
  EmqdProcess d(config_head(server) + pool_queue("ft-root", 1, 600) + pool_queue("ft-kid", 8, 0));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return completed("ft-root") == 1; }, seconds(120))) << d.log();
  const std::int64_t told_in = server.calls("scard") - before;

  nlohmann::json given = nlohmann::json::parse(row("ft-root", flow.id)["result"])["children"];
  ASSERT_EQ(given.size(), static_cast<std::size_t>(kChildren));
  std::set<std::string> payloads;
  for (const auto& c : given) {
    EXPECT_EQ(c["queue"], "ft-kid");
    EXPECT_EQ(c["outcome"], "completed");
    payloads.insert(nlohmann::json::parse(std::string(c["result"]))["payload"].get<std::string>());
  }
  EXPECT_EQ(payloads.size(), static_cast<std::size_t>(kChildren)) << "each child's own result, once";
  EXPECT_GE(told_in, 1);
  EXPECT_LT(told_in, kChildren) << "a call per child: the drainer does not batch";
  std::cout << "children_done calls for a parent of " << kChildren << " children: " << told_in << '\n';
  EXPECT_TRUE(wait_for([&] { return x.command({"ZCARD", QueueKeys("ft-kid").outbox}).integer == 0; }, seconds(10)));
}

TEST_F(FlowBatching, AParentEnqueuedByAnOlderProducerStillRunsWithItsChildrensResults) {
  FlowNode root;
  root.queue = "fo-root";
  root.payload = "root";
  for (const char* p : {"a", "b"}) {
    FlowNode child;
    child.queue = "fo-kid";
    child.payload = p;
    root.children.push_back(child);
  }
  const FlowJob flow = enqueue_flow(x, root);
  // What enqueue_parent wrote before meta had `parents`.
  x.command({"HDEL", QueueKeys("fo-root").meta, "parents"});
  x.command({"HSET", QueueKeys("fo-root").meta, "flows", "1"});
  EmqdProcess d(config_head(server) + pool_queue("fo-root", 1, 600) + pool_queue("fo-kid", 2, 0));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return completed("fo-root") == 1; }, seconds(60))) << d.log();
  nlohmann::json given = nlohmann::json::parse(row("fo-root", flow.id)["result"])["children"];
  EXPECT_EQ(given.size(), 2u) << given.dump();
}

}  // namespace
}  // namespace echomq::test
