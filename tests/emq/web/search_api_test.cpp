// GET /api/search and the bulk POSTs of `emq web`, against a real server
// and a real `emq web`: the id search across queues, a payload word among
// 50,000 rows with what was scanned, hostile text staying data, and the
// bulk retry and cancel with their guards.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/jobs.h"
#include "echomq/stats.h"
#include "seed_jobs.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class SearchApiTest : public WebApiTest {
 protected:
  std::string search_path(const std::string& query) const {
    return "/api/search?queue=" + url_encode(queue()) + "&" + query;
  }
};

TEST_F(SearchApiTest, FindsAWordAmong50000AndSaysWhatItRead) {
  seed_pending(x(), keys(), numbered_ids(50000, "w"), [](std::size_t i) {
    return i == 31337 ? std::string("{\"order\":4711}") : std::string("{\"order\":1}");
  });
  HttpAnswer a = get(search_path("q=4711&scan=50000"));
  ASSERT_EQ(a.status, 200) << a.body;
  json b = body_of(a);
  EXPECT_EQ(b["kind"], "text");
  EXPECT_EQ(b["scanned"], 50000);
  EXPECT_EQ(b["total"], 50000);
  EXPECT_EQ(b["found"], 1);
  ASSERT_EQ(b["jobs"].size(), 1u);
  EXPECT_EQ(b["jobs"][0]["id"], "JOB_w131337");
  EXPECT_EQ(b["jobs"][0]["payload"]["text"], "{\"order\":4711}");

  b = body_of(get(search_path("q=4711")));
  EXPECT_EQ(b["scanned"], 10000) << "the default bound";
  EXPECT_EQ(b["found"], 0);

  b = body_of(get(search_path("q=JOB_w1000&in=id&scan=50000")));
  EXPECT_EQ(b["found"], 100) << "JOB_w100000 to JOB_w100099";
  EXPECT_EQ(b["jobs"].size(), 50u) << "the first 50 shown";
}

TEST_F(SearchApiTest, AnIdWithoutAQueueIsLookedForInEveryQueue) {
  seed_pending(x(), keys(), {"JOB_find_me"}, [](std::size_t) { return "x"; });
  register_queues(x(), {queue()});
  json b = body_of(get("/api/search?q=JOB_find_me"));
  EXPECT_EQ(b["kind"], "id");
  ASSERT_EQ(b["found"].size(), 1u);
  EXPECT_EQ(b["found"][0]["queue"], queue());
  EXPECT_EQ(b["found"][0]["state"], "pending");
  EXPECT_TRUE(body_of(get("/api/search?q=JOB_nowhere"))["found"].empty());
  EXPECT_EQ(get("/api/search?q=not-a-job").status, 400);
}

TEST_F(SearchApiTest, BadQueriesAre400) {
  EXPECT_EQ(get(search_path("q=x&state=finished")).status, 400);
  EXPECT_EQ(get(search_path("q=x&in=everything")).status, 400);
  EXPECT_EQ(get(search_path("q=x&scan=0")).status, 400);
  EXPECT_EQ(get(search_path("q=x&scan=50001")).status, 400);
  EXPECT_EQ(get(search_path("q=")).status, 400);
  EXPECT_EQ(get("/api/search").status, 400);
}

TEST_F(SearchApiTest, HostileTextFoundIsReturnedAsData) {
  const std::string hostile = "<img src=x onerror=alert(1)>\"'&";
  seed_dead(
      x(), keys(), {"JOB_h1"}, [&](std::size_t) { return hostile; }, [&](std::size_t) { return hostile; });
  const HttpAnswer a = get(search_path("q=" + url_encode("onerror=") + "&state=dead&in=error"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.headers.at("content-type"), "application/json; charset=utf-8");
  const json b = body_of(a);
  ASSERT_EQ(b["jobs"].size(), 1u);
  EXPECT_EQ(b["jobs"][0]["error"]["text"], hostile);
  EXPECT_EQ(b["jobs"][0]["payload"]["text"], hostile);
}

TEST_F(SearchApiTest, BulkRetryActsOnTheMatchesOnlyAndNeedsTheToken) {
  seed_dead(
      x(), keys(), numbered_ids(1200, "r"), [](std::size_t) { return "{}"; },
      [](std::size_t i) { return i < 1000 ? "connect timeout" : "bad input"; });
  const std::string path = qpath() + "/bulk/retry?match=timeout";
  EXPECT_EQ(request(port(), "POST", path).status, 403) << "no token";
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 1200);
  const HttpAnswer a = act(path);
  ASSERT_EQ(a.status, 200) << a.body;
  const json b = body_of(a);
  EXPECT_EQ(b["found"], 1000);
  EXPECT_EQ(b["done"], 1000);
  EXPECT_EQ(b["changed"], 0);
  EXPECT_EQ(b["scanned"], 1200);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 200);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 1000);
  EXPECT_EQ(act(qpath() + "/bulk/retry?match=x&state=pending").status, 400);
}

TEST_F(SearchApiTest, BulkCancelTakesPendingOrDelayedAndReadOnlyRefuses) {
  seed_pending(x(), keys(), numbered_ids(30, "c"), [](std::size_t i) { return i < 10 ? "cancel me" : "keep me"; });
  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, {{"EMQ_URL", server().url()}});
  ASSERT_GT(ro.port(), 0) << ro.output();
  const std::string origin = "http://127.0.0.1:" + std::to_string(ro.port());
  EXPECT_EQ(request(ro.port(), "POST", qpath() + "/bulk/cancel?match=cancel", {{"Origin", origin}}).status, 403);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 30);

  EXPECT_EQ(act(qpath() + "/bulk/cancel?match=cancel&state=dead").status, 400);
  const HttpAnswer a = act(qpath() + "/bulk/cancel?match=cancel");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["done"], 10);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 20);
}

}  // namespace
}  // namespace echomq::test
