// emq web pointed at one node of a three-primary cluster: the overview reads
// every shard's queues in one request, a queue's dead jobs list from their
// own primary, and an action taken on the page lands on that primary.
#include <nlohmann/json.hpp>

#include "../emq/web/emq_web_process.h"
#include "../emq/web/web_client.h"
#include "cluster_fixture.h"
#include "echomq/flows.h"
#include "echomq/stats.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class ClusterWeb : public ClusterTest {};

TEST_F(ClusterWeb, TheOverviewListsEveryShardAndARetryLandsOnTheQueuesPrimary) {
  const std::vector<std::string> queues = {queue_on(0, "web"), queue_on(1, "web"), queue_on(2, "web")};
  for (std::size_t i = 0; i < queues.size(); ++i) put_many(queues[i], static_cast<int>(i) + 1);
  register_queues(x, queues);  // what a daemon serving them does at start

  // One job of the last shard's queue dies, as a worker's permanent failure leaves it.
  QueueKeys last(queues[2]);
  std::vector<ClaimedJob> got = claim(x, last, ClaimArgs{});
  ASSERT_EQ(got.size(), 1u);
  FailArgs fa;
  fa.error = "broken on purpose";
  fa.permanent = true;
  ASSERT_EQ(fail(x, last, Lease{got[0].id, got[0].lease_epoch}, fa), FailResult::Dead);

  EmqWeb web({"--listen", "127.0.0.1:0"}, {{"EMQ_URL", cluster.url(1)}});
  ASSERT_GT(web.port(), 0) << web.output();

  const HttpAnswer overview = request(web.port(), "GET", "/api/queues");
  ASSERT_EQ(overview.status, 200) << overview.body;
  std::map<std::string, std::int64_t> pending;
  const json listed = body_of(overview);
  for (const json& q : listed["queues"]) pending[q["queue"]] = q["pending"];
  EXPECT_EQ(pending[queues[0]], 1) << overview.body;
  EXPECT_EQ(pending[queues[1]], 2);
  EXPECT_EQ(pending[queues[2]], 2) << "three enqueued, one claimed and dead";

  const std::string qpath = "/api/queues/" + url_encode(queues[2]);
  const json dead = body_of(request(web.port(), "GET", qpath + "?state=dead"));
  ASSERT_EQ(dead["jobs"].size(), 1u) << dead.dump();
  EXPECT_EQ(dead["jobs"][0]["id"], got[0].id);

  const HttpAnswer retried = request(web.port(), "POST", qpath + "/jobs/" + url_encode(got[0].id) + "/retry",
                                     {{"X-EMQ-Token", token_of(web.port())},
                                      {"Origin", "http://127.0.0.1:" + std::to_string(web.port())},
                                      {"Sec-Fetch-Site", "same-origin"}});
  EXPECT_EQ(retried.status, 200) << retried.body;
  QueueStats s = stats(x, last);
  EXPECT_EQ(s.dead, 0);
  EXPECT_EQ(s.pending, 3) << "the retried job is pending again on its own primary";
}

// A flow over three shards: a job's page links its parent and its children
// with their states, each read from its own primary.
TEST_F(ClusterWeb, AFlowsParentAndChildLinksCrossShards) {
  const std::string parents = queue_on(0, "webp"), kids_a = queue_on(1, "webk"), kids_b = queue_on(2, "webk");
  FlowNode root;
  root.queue = parents;
  root.payload = "sheet";
  FlowNode a, b;
  a.queue = kids_a;
  a.payload = "a";
  b.queue = kids_b;
  b.payload = "b";
  root.children = {a, b};
  const FlowJob flow = enqueue_flow(x, root);
  // The first child runs and dies; no daemon tells the parent, which waits on.
  FailArgs fa;
  fa.error = "broken on purpose";
  fa.permanent = true;
  std::vector<ClaimedJob> got = claim(x, QueueKeys(kids_a), ClaimArgs{});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(decode_fail(x.eval(fail_call(QueueKeys(kids_a), Lease{got[0].id, got[0].lease_epoch}, fa, FlowMode::Flow))),
            FailResult::Dead);

  EmqWeb web({"--listen", "127.0.0.1:0"}, {{"EMQ_URL", cluster.url(1)}});
  ASSERT_GT(web.port(), 0) << web.output();
  const json parent =
      body_of(request(web.port(), "GET", "/api/queues/" + url_encode(parents) + "/jobs/" + url_encode(flow.id)));
  ASSERT_EQ(parent["children"].size(), 2u) << parent.dump();
  std::map<std::string, std::string> states;
  for (const json& c : parent["children"]) states[c["queue"]] = c["state"];
  EXPECT_EQ(states[kids_a], "dead") << parent.dump();
  EXPECT_EQ(states[kids_b], "pending") << parent.dump();

  const FlowJob& child = flow.children[1];
  const json kid =
      body_of(request(web.port(), "GET", "/api/queues/" + url_encode(child.queue) + "/jobs/" + url_encode(child.id)));
  ASSERT_TRUE(kid["parent"].is_object()) << kid.dump();
  EXPECT_EQ(kid["parent"]["queue"], parents);
  EXPECT_EQ(kid["parent"]["state"], "waiting") << kid.dump();
}

}  // namespace
}  // namespace echomq::test
