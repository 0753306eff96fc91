// A parent's job page carries its whole tree (/api/queues/Q/jobs/ID,
// "tree"), over real sockets against a real server: descendants of every
// level across queues with their states and result heads, and a tree past
// 1,000 jobs cut and counted rather than read whole.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/flows.h"
#include "echomq/transitions.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

// A job of a tree in `queue` over `children`, the rest as enqueue_flow defaults.
FlowNode job(const std::string& queue, std::vector<FlowNode> children = {}) {
  FlowNode n;
  n.queue = queue;
  n.payload = "p";
  n.children = std::move(children);
  return n;
}

TEST_F(WebApiTest, AParentsPageShowsEveryLevelOfItsTreeWithResults) {
  const std::string mid = queue().substr(0, 58) + ".mid", leaves = queue().substr(0, 58) + ".leaf";
  const FlowJob ids = enqueue_flow(x(), job(queue(), {job(mid, {job(leaves)})}));
  const QueueKeys lq(leaves);
  const std::vector<ClaimedJob> got = claim(x(), lq, {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  const Reply done = x().eval(complete_call(lq, {got[0].id, got[0].lease_epoch}, 0, "leaf done", FlowMode::Flow));
  ASSERT_FALSE(done.is_error()) << done.str;

  const HttpAnswer a = get(qpath() + "/jobs/" + ids.id);
  ASSERT_EQ(a.status, 200) << a.body;
  const json tree = body_of(a)["tree"];
  EXPECT_EQ(tree["nodes"], 3) << tree;
  EXPECT_EQ(tree["cut"], 0);
  ASSERT_EQ(tree["root"]["children"].size(), 1u) << tree;
  const json& middle = tree["root"]["children"][0];
  EXPECT_EQ(middle["queue"], mid);
  EXPECT_EQ(middle["state"], "waiting");
  EXPECT_EQ(middle["awaited"], true);
  ASSERT_EQ(middle["children"].size(), 1u) << tree;
  const json& leaf = middle["children"][0];
  EXPECT_EQ(leaf["queue"], leaves);
  EXPECT_EQ(leaf["state"], "completed");
  EXPECT_EQ(leaf["result"]["text"], "leaf done");

  const HttpAnswer plain = get("/api/queues/" + leaves + "/jobs/" + got[0].id);
  EXPECT_TRUE(body_of(plain)["tree"].is_null()) << "no parent, no tree";
}

TEST_F(WebApiTest, ATreePastAThousandJobsIsCutAndCounted) {
  const std::string kids = queue().substr(0, 58) + ".kids";
  const FlowJob ids = enqueue_flow(x(), job(queue(), std::vector<FlowNode>(1001, job(kids))));
  const auto t0 = std::chrono::steady_clock::now();
  const HttpAnswer a = get(qpath() + "/jobs/" + ids.id);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[figure] GET a parent's page, 1,001 children (1,000 read): %.3f s, %zu bytes\n", s, a.body.size());
  ASSERT_EQ(a.status, 200) << a.body.substr(0, 300);
  const json tree = body_of(a)["tree"];
  EXPECT_EQ(tree["nodes"], 1000);
  EXPECT_EQ(tree["cut"], 2);
  int cut = 0;
  for (const json& c : tree["root"]["children"]) cut += c.value("cut", "") == "nodes";
  EXPECT_EQ(cut, 2);
}

}  // namespace
}  // namespace echomq::test
