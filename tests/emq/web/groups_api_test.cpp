// A queue's groups in `emq web` (groups_api.h) against a real
// valkey-server and a real `emq web`: the largest backlogs first, bounded,
// with the queue's totals; one group with its pending jobs in claim order;
// pause, resume, weight and caps merged into the group's own policy and
// written through group_set, so claim serves what the page says; and each
// action refused under --read-only, without the token, from another origin.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/transitions.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class GroupsApiTest : public WebApiTest {
 protected:
  void enqueue_grouped(const std::string& group, int jobs) {
    for (int i = 0; i < jobs; ++i) {
      const std::string id = "JOB_" + group + "_" + (i < 10 ? "0" : "") + std::to_string(i);
      ASSERT_EQ(enqueue(x(), keys(), id, "work of " + group, EnqueueOptions{0, std::nullopt, {}, group}),
                EnqueueResult::Enqueued);
    }
  }
  // The group's own policy in the server, "(none)" when it has none.
  std::string own_policy(const std::string& group) {
    const Reply r = x().command({"HGET", keys().groups, group});
    return r.is_nil() ? "(none)" : r.str;
  }
  std::string gpath(const std::string& group) { return qpath() + "/groups/" + url_encode(group); }
  // The groups of the jobs one claim of n takes.
  std::vector<std::string> claimed_groups(int n) {
    std::vector<std::string> out;
    for (const ClaimedJob& j : claim(x(), keys(), {30000, n, 0})) {
      out.push_back(x().command({"HGET", keys().row(j.id), "group"}).str);
    }
    return out;
  }
};

TEST_F(GroupsApiTest, LargestBacklogsFirstBoundedWithTotals) {
  // 25 groups, t00 with 1 job up to t24 with 25: 325 grouped, and 3 ungrouped.
  const auto name = [](int i) { return "t" + std::string(i < 10 ? "0" : "") + std::to_string(i); };
  for (int i = 0; i < 25; ++i) enqueue_grouped(name(i), i + 1);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(enqueue(x(), keys(), "JOB_free_" + std::to_string(i), "p"), EnqueueResult::Enqueued);
  group_set(x(), keys(), "*", "weight=2");
  group_set(x(), keys(), "t03", "weight=5 max_active=2");

  HttpAnswer a = get(qpath() + "/groups");
  ASSERT_EQ(a.status, 200) << a.body;
  json b = body_of(a);
  EXPECT_EQ(b["groups"], 25);
  EXPECT_EQ(b["grouped_pending"], 325);
  EXPECT_GE(b["rotation"], 25) << "every group with work, and the ungrouped jobs' *";
  EXPECT_EQ(b["default_policy"]["text"], "weight=2");
  EXPECT_EQ(b["default_policy"]["described"], "weight 2");
  EXPECT_EQ(b["limit"], 20);
  ASSERT_EQ(b["top"].size(), 20u) << "bounded: the 20 largest backlogs";
  for (std::size_t i = 0; i < 20; ++i) {
    const int n = 25 - static_cast<int>(i);
    EXPECT_EQ(b["top"][i]["group"], name(n - 1)) << i;
    EXPECT_EQ(b["top"][i]["pending"], n) << i;
    EXPECT_EQ(b["top"][i]["active"], 0) << i;
    EXPECT_EQ(b["top"][i]["place"], "rotation") << b["top"][i];
    EXPECT_TRUE(b["top"][i]["turn"].is_number()) << b["top"][i];
    EXPECT_TRUE(b["top"][i]["own_policy"].is_null()) << b["top"][i];
    EXPECT_EQ(b["top"][i]["policy"]["weight"], 2) << "the default's";
  }

  b = body_of(get(qpath() + "/groups?limit=100"));
  ASSERT_EQ(b["top"].size(), 25u);
  const json& t03 = b["top"][21];
  EXPECT_EQ(t03["group"], "t03");
  EXPECT_EQ(t03["own_policy"], "weight=5 max_active=2");
  EXPECT_EQ(t03["policy"]["weight"], 5);
  EXPECT_EQ(t03["policy"]["max_active"], 2);
  EXPECT_EQ(t03["policy"]["described"], "weight 5, max_active 2");
  EXPECT_EQ(get(qpath() + "/groups?limit=0").status, 400);
  EXPECT_EQ(get(qpath() + "/groups?limit=101").status, 400);

  // A queue without groups answers with none.
  b = body_of(get("/api/queues/nogroups/groups"));
  EXPECT_EQ(b["groups"], 0);
  EXPECT_EQ(b["top"].size(), 0u);
  EXPECT_EQ(b["default_policy"]["text"], "");
}

TEST_F(GroupsApiTest, AGroupListsItsPendingJobsInClaimOrderAPageAtATime) {
  enqueue_grouped("acme", 60);
  ASSERT_EQ(claim(x(), keys(), {30000, 1, 0}).front().id, "JOB_acme_00");
  HttpAnswer a = get(gpath("acme"));
  ASSERT_EQ(a.status, 200) << a.body;
  json b = body_of(a);
  EXPECT_EQ(b["group"]["pending"], 59);
  EXPECT_EQ(b["group"]["active"], 1);
  EXPECT_EQ(b["total"], 59);
  EXPECT_EQ(b["pages"], 2);
  ASSERT_EQ(b["jobs"].size(), 50u);
  EXPECT_EQ(b["jobs"][0]["id"], "JOB_acme_01") << "the next one claim takes";
  EXPECT_EQ(b["jobs"][49]["id"], "JOB_acme_50");
  EXPECT_EQ(b["jobs"][0]["state"], "pending");
  EXPECT_EQ(b["jobs"][0]["lane"], 0);
  EXPECT_EQ(b["jobs"][0]["payload"]["text"], "work of acme");
  b = body_of(get(gpath("acme") + "?page=2"));
  ASSERT_EQ(b["jobs"].size(), 9u);
  EXPECT_EQ(b["jobs"][8]["id"], "JOB_acme_59");

  EXPECT_EQ(get(gpath("acme") + "?page=0").status, 400);
  EXPECT_EQ(get(gpath("a b")).status, 400) << "not a group name";
  b = body_of(get(gpath("nobody")));
  EXPECT_EQ(b["group"]["pending"], 0);
  EXPECT_EQ(b["group"]["place"], "out");
  EXPECT_EQ(b["jobs"].size(), 0u);
  a = get("/queues/" + url_encode(queue()) + "/groups/acme");
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find("emq-token"), std::string::npos) << "the page, which reads the path";
}

TEST_F(GroupsApiTest, PauseResumeAndCapsMergeIntoTheGroupsOwnPolicy) {
  group_set(x(), keys(), "*", "weight=3 max_active=4");
  enqueue_grouped("acme", 2);
  enqueue_grouped("beta", 1);

  HttpAnswer a = act(gpath("acme") + "/pause");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["written"], "weight=3 max_active=4 paused=1") << "the default's fields kept";
  EXPECT_EQ(own_policy("acme"), "weight=3 max_active=4 paused=1");
  EXPECT_EQ(body_of(a)["group"]["policy"]["paused"], true);
  EXPECT_EQ(claimed_groups(3), std::vector<std::string>{"beta"}) << "a paused group is not served";
  EXPECT_EQ(body_of(get(gpath("acme")))["group"]["place"], "out") << "claim met it paused: out of the rotation";

  a = act(gpath("acme") + "/resume");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["written"], "");
  EXPECT_EQ(body_of(a)["in_rotation"], true);
  EXPECT_EQ(own_policy("acme"), "(none)") << "equal to the default again: it runs by the default";
  EXPECT_EQ(claimed_groups(3), (std::vector<std::string>{"acme", "acme"}));

  a = act(gpath("beta") + "/policy?weight=7");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(own_policy("beta"), "weight=7 max_active=4");
  a = act(gpath("beta") + "/policy?max_active=off&rate=" + url_encode("10/1s"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(own_policy("beta"), "weight=7 rate_max=10 rate_window_ms=1000");
  EXPECT_EQ(body_of(a)["group"]["policy"]["described"], "weight 7, rate 10/1000ms");

  // A bad value names its field, and nothing is written.
  for (const std::string query : {"weight=0", "weight=1001", "max_active=0", "rate=10%2Flunch"}) {
    a = act(gpath("beta") + "/policy?" + query);
    EXPECT_EQ(a.status, 400) << query << a.body;
    EXPECT_EQ(body_of(a)["error"].get<std::string>().rfind(query.substr(0, query.find('=')) + ": expected", 0), 0u)
        << a.body;
  }
  EXPECT_EQ(act(gpath("beta") + "/policy").status, 400);
  EXPECT_EQ(act(gpath("a b") + "/pause").status, 400);
  EXPECT_EQ(own_policy("beta"), "weight=7 rate_max=10 rate_window_ms=1000");

  // A policy another writer broke is not guessed at.
  ASSERT_FALSE(x().command({"HSET", keys().groups, "beta", "weight=heavy"}).is_error());
  a = act(gpath("beta") + "/pause");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "broken");
  EXPECT_NE(body_of(a)["error"].get<std::string>().find("weight must be an integer in 1..1000"), std::string::npos)
      << a.body;
  EXPECT_EQ(own_policy("beta"), "weight=heavy");
}

// A group paused from the page before it has jobs is in the queue's list
// at once (after the groups holding keys, at 0 and 0), so the page shows
// what it did; "more" says when the limit left groups out.
TEST_F(GroupsApiTest, AGroupPausedBeforeItsFirstJobIsListed) {
  HttpAnswer a = act(gpath("zeta") + "/pause");
  ASSERT_EQ(a.status, 200) << a.body;
  json b = body_of(get(qpath() + "/groups"));
  EXPECT_EQ(b["groups"], 0) << "none holds keys";
  EXPECT_EQ(b["policies"], 1);
  ASSERT_EQ(b["top"].size(), 1u) << b;
  EXPECT_EQ(b["top"][0]["group"], "zeta");
  EXPECT_EQ(b["top"][0]["pending"], 0);
  EXPECT_EQ(b["top"][0]["policy"]["paused"], true);
  EXPECT_EQ(b["more"], false);

  enqueue_grouped("acme", 2);
  b = body_of(get(qpath() + "/groups"));
  ASSERT_EQ(b["top"].size(), 2u) << b;
  EXPECT_EQ(b["top"][0]["group"], "acme") << "the groups holding keys first";
  EXPECT_EQ(b["top"][1]["group"], "zeta");
  b = body_of(get(qpath() + "/groups?limit=1"));
  ASSERT_EQ(b["top"].size(), 1u) << b;
  EXPECT_EQ(b["top"][0]["group"], "acme");
  EXPECT_EQ(b["more"], true) << "zeta is left out";
}

TEST_F(GroupsApiTest, ActionsRefusedReadOnlyTokenlessOrForeign) {
  enqueue_grouped("acme", 1);
  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, {{"EMQ_URL", server().url()}});
  ASSERT_GT(ro.port(), 0) << ro.output();
  const std::string ro_origin = "http://127.0.0.1:" + std::to_string(ro.port());
  for (const std::string path : {"/pause", "/resume", "/policy?weight=2"}) {
    HttpAnswer a =
        request(ro.port(), "POST", gpath("acme") + path, {{"X-EMQ-Token", token_of(port())}, {"Origin", ro_origin}});
    EXPECT_EQ(a.status, 403) << path << a.body;
    EXPECT_NE(a.body.find("read-only"), std::string::npos) << a.body;
    a = request(port(), "POST", gpath("acme") + path, {{"Origin", "http://127.0.0.1:" + std::to_string(port())}});
    EXPECT_EQ(a.status, 403) << path << a.body;
    EXPECT_NE(a.body.find("token"), std::string::npos) << a.body;
    a = request(port(), "POST", gpath("acme") + path,
                {{"X-EMQ-Token", token_of(port())}, {"Origin", "http://evil.test"}});
    EXPECT_EQ(a.status, 403) << path << a.body;
    EXPECT_NE(a.body.find("Origin 'http://evil.test'"), std::string::npos) << a.body;
  }
  EXPECT_EQ(own_policy("acme"), "(none)");
  EXPECT_EQ(claimed_groups(1), std::vector<std::string>{"acme"});
}

}  // namespace
}  // namespace echomq::test
