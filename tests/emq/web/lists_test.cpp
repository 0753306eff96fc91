// The queue page's Waiting and Completed tabs and the overview's one live
// stream, over real sockets against a real server: parents that wait for
// their children listed longest waiting first; completions read back from
// the events stream newest first, a page per cursor, linked while their
// rows live; a queue without events told how to keep them; and one
// server-sent stream carrying the entries of two queues.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/events.h"
#include "echomq/flows.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "wait_for.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;
// What a Completed page reads of the stream at most (web/lists_api.h).
constexpr int kCompletedScan = 5000;

class WebListsTest : public WebApiTest {
 protected:
  // A job of q run to completion through the transitions, each carrying
  // the stream as emqd passes it; keep_ms keeps its row that long.
  std::string run_one(const QueueKeys& q, std::int64_t keep_ms) {
    const std::string id = mint_job_id();
    EXPECT_FALSE(x().eval(with_events(enqueue_call(q, id, "p"), q, 1000)).is_error());
    const std::vector<ClaimedJob> got = decode_claim(x().eval(with_events(claim_call(q, {30000, 1, 0}), q, 1000)));
    EXPECT_EQ(got.size(), 1u);
    if (got.empty()) return id;
    const Reply done = x().eval(with_events(complete_call(q, {got[0].id, got[0].lease_epoch}, keep_ms, "ok"), q, 1000));
    EXPECT_FALSE(done.is_error()) << done.str;
    return id;
  }
  json completed(const std::string& query = "") {
    const HttpAnswer a = get(qpath() + "/completed" + query);
    EXPECT_EQ(a.status, 200) << a.body;
    return body_of(a);
  }
  FlowJob flow_of(const std::string& kids) {
    FlowNode root;
    root.queue = queue();
    root.payload = "parent";
    FlowNode child;
    child.queue = kids;
    child.payload = "child";
    root.children = {child};
    return enqueue_flow(x(), root);
  }
};

TEST_F(WebListsTest, WaitingTabListsParentsLongestWaitingFirst) {
  const std::string kids = queue().substr(0, 58) + ".kids";
  const FlowJob newer = flow_of(kids);
  const FlowJob older = flow_of(kids);
  // The second parent waited longer: its score (time it began waiting) is earlier.
  ASSERT_EQ(x().command({"ZADD", keys().waiting, "XX", "CH", "1000", older.id}).integer, 1);

  const HttpAnswer a = get(qpath() + "?state=waiting");
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = body_of(a);
  EXPECT_EQ(body["state"], "waiting");
  EXPECT_EQ(body["total"], 2);
  ASSERT_EQ(body["jobs"].size(), 2u) << body;
  EXPECT_EQ(body["jobs"][0]["id"], older.id);
  EXPECT_EQ(body["jobs"][0]["time_ms"], 1000);
  EXPECT_EQ(body["jobs"][1]["id"], newer.id);
  EXPECT_EQ(body["jobs"][1]["state"], "waiting");
  EXPECT_EQ(body["jobs"][1]["payload"]["text"], "parent");
  // The queue's summary counts them too, so the tab says how many before
  // it is opened.
  EXPECT_EQ(body["queue"]["waiting"], 2) << body["queue"];
}

TEST_F(WebListsTest, CompletedTabReadsTheStreamNewestFirstAPagePerCursor) {
  x().command(events_write(keys(), 1000));
  const std::string kept = run_one(keys(), 60000);
  std::vector<std::string> ids;
  for (int i = 0; i < 149; ++i) ids.push_back(run_one(keys(), 0));
  // Entries of other events are passed over.
  const std::string other = mint_job_id();
  x().eval(with_events(enqueue_call(keys(), other, "p"), keys(), 1000));

  const json first = completed();
  EXPECT_EQ(first["keeps_events"], true);
  ASSERT_EQ(first["completed"].size(), 100u) << first;
  EXPECT_EQ(first["completed"][0]["id"], ids.back());
  EXPECT_TRUE(first["completed"][0]["row_state"].is_null()) << "no row kept: shown unlinked";
  EXPECT_EQ(first["completed"][0]["attempt"], "1");
  EXPECT_GT(first["completed"][0]["time_ms"].get<std::int64_t>(), 0);
  ASSERT_TRUE(first["next"].is_string()) << first;

  const json second = completed("?before=" + url_encode(first["next"].get<std::string>()));
  ASSERT_EQ(second["completed"].size(), 50u) << second;
  EXPECT_TRUE(second["next"].is_null()) << second;
  const json& oldest = second["completed"][49];
  EXPECT_EQ(oldest["id"], kept);
  EXPECT_EQ(oldest["row_state"], "completed") << "a kept row is linked";
  EXPECT_EQ(second["completed"][0]["id"], ids[48]);

  const HttpAnswer bad = get(qpath() + "/completed?before=yesterday");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("not a stream entry id"), std::string::npos) << bad.body;
}

// A page reads at most 5,000 entries: a completion under 6,000 other
// entries is on the second page, reached by the cursor.
TEST_F(WebListsTest, CompletedTabReadsABoundedStretchAPage) {
  x().command(events_write(keys(), 100000));
  const std::string done = run_one(keys(), 0);
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<ScriptCall> calls;
    for (int i = 0; i < 500; ++i)
      calls.push_back(with_events(enqueue_call(keys(), mint_job_id(), "p"), keys(), 100000));
    for (const Reply& r : x().eval_batch(calls, {})) ASSERT_FALSE(r.is_error()) << r.str;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const json first = completed();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[figure] GET /api/queues/Q/completed reading 5,000 stream entries: %.3f s\n", s);
  EXPECT_EQ(first["scanned"], kCompletedScan);
  EXPECT_TRUE(first["completed"].empty()) << first;
  ASSERT_TRUE(first["next"].is_string()) << first;
  const json second = completed("?before=" + url_encode(first["next"].get<std::string>()));
  ASSERT_EQ(second["completed"].size(), 1u) << second;
  EXPECT_EQ(second["completed"][0]["id"], done);
  EXPECT_TRUE(second["next"].is_null());
}

TEST_F(WebListsTest, CompletedTabOfAQueueWithoutEventsSaysHowToKeepThem) {
  run_one(keys(), 60000);
  const json body = completed();
  EXPECT_EQ(body["keeps_events"], false);
  EXPECT_TRUE(body["completed"].empty());
  EXPECT_NE(body["how"].get<std::string>().find("queues[].events"), std::string::npos) << body;
}

// The overview's one stream: ready per queue that keeps events, off for
// one that does not, and each entry naming its queue.
TEST_F(WebListsTest, OverviewStreamCarriesTheEntriesOfTwoQueues) {
  const QueueKeys a(queue().substr(0, 60) + ".a"), b(queue().substr(0, 60) + ".b"), quiet(queue().substr(0, 60) + ".q");
  x().command(events_write(a, 100));
  x().command(events_write(b, 100));
  Client c(port());
  c.send("GET /api/events/overview?queue=" + a.queue + "&queue=" + b.queue + "&queue=" + quiet.queue +
         " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port()) + "\r\n\r\n");
  std::string seen;
  const auto read_until = [&](const std::string& text) { return test::read_until(c, seen, text); };
  ASSERT_TRUE(read_until("event: ready\ndata: {\"queue\":\"" + a.queue + "\"}")) << seen;
  ASSERT_TRUE(read_until("event: ready\ndata: {\"queue\":\"" + b.queue + "\"}")) << seen;
  ASSERT_TRUE(read_until("event: off\ndata: {\"queue\":\"" + quiet.queue + "\"}")) << seen;
  const std::string in_a = mint_job_id(), in_b = mint_job_id();
  x().eval(with_events(enqueue_call(a, in_a, "p"), a, 100));
  x().eval(with_events(enqueue_call(b, in_b, "p"), b, 100));
  EXPECT_TRUE(read_until("\"queue\":\"" + a.queue + "\",\"event\":\"pending\",\"id\":\"" + in_a + "\"")) << seen;
  EXPECT_TRUE(read_until("\"queue\":\"" + b.queue + "\",\"event\":\"pending\",\"id\":\"" + in_b + "\"")) << seen;
}

TEST_F(WebListsTest, OverviewStreamRefusesPastSixtyFourQueuesByName) {
  std::string query;
  for (int i = 0; i < 65; ++i) query += (i ? "&" : "") + std::string("queue=q") + std::to_string(i);
  const HttpAnswer many = get("/api/events/overview?" + query);
  EXPECT_EQ(many.status, 400);
  EXPECT_NE(many.body.find("at most 64"), std::string::npos) << many.body;
  const HttpAnswer bad = get("/api/events/overview?queue=a%20b");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("'a b' is not a queue name"), std::string::npos) << bad.body;
  EXPECT_EQ(get("/api/events/overview").status, 400);
}

}  // namespace
}  // namespace echomq::test
