// Issue 54's API against a real valkey-server and a real `emq web`: select
// and act (Retry, Run now, Cancel, Delete on ticked ids, bounded batches,
// moved-on jobs left alone and counted, refused under --read-only, without
// the token and from another origin); the Retries list and the page sizes;
// a job's story read from the events stream (every run with its error,
// the times, and saying so once the stream was trimmed); the overview's
// per-queue history; the server panel.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/events.h"
#include "echomq/history.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "seed_jobs.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class SelectStoryTest : public WebApiTest {
 protected:
  std::string state_of(const std::string& id) { return x().command({"HGET", keys().row(id), "state"}).str; }
  void seed_dead_ids(const std::vector<std::string>& ids) {
    seed_dead(
        x(), keys(), ids, [](std::size_t) { return "p"; }, [](std::size_t i) { return "boom " + std::to_string(i); });
  }
  void enqueue_delayed(const std::string& id) {
    ASSERT_EQ(enqueue(x(), keys(), id, "p", {0, x().server_time_ms() + 3600000}), EnqueueResult::Enqueued);
  }
  // A delayed job that failed once: claimed, then failed with a backoff.
  void seed_retry(const std::string& id, const std::string& error) {
    ASSERT_EQ(enqueue(x(), keys(), id, "p"), EnqueueResult::Enqueued);
    const std::vector<ClaimedJob> got = claim(x(), keys(), {30000, 1, 0});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(fail(x(), keys(), {got[0].id, got[0].lease_epoch}, {error, 5, 3600000, false}), FailResult::Retry);
  }
  HttpAnswer select(const std::string& action, const std::string& state, const std::vector<std::string>& ids) {
    std::string path = qpath() + "/selection/" + action + "?state=" + state;
    for (const std::string& id : ids) path += "&id=" + url_encode(id);
    return act(path);
  }
};

TEST_F(SelectStoryTest, RetryCountsWhatMovedOn) {
  seed_dead_ids({"JOB_a", "JOB_b", "JOB_c", "JOB_d"});
  // Retried by someone else between the tick and the button.
  ASSERT_EQ(retry_job(x(), keys(), "JOB_b"), RetryJobResult::Moved);
  const HttpAnswer a = select("retry", "dead", {"JOB_a", "JOB_b", "JOB_c"});
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = body_of(a);
  EXPECT_EQ(body["asked"], 3);
  EXPECT_EQ(body["done"], 2);
  EXPECT_EQ(body["moved_on"], 1);
  EXPECT_EQ(state_of("JOB_a"), "pending");
  EXPECT_EQ(state_of("JOB_c"), "pending");
  EXPECT_EQ(state_of("JOB_d"), "dead") << "not selected: left dead";
}

TEST_F(SelectStoryTest, RunNowCancelAndDelete) {
  for (const std::string id : {"JOB_d1", "JOB_d2", "JOB_d3"}) enqueue_delayed(id);
  json body = body_of(select("run", "delayed", {"JOB_d1", "JOB_d2"}));
  EXPECT_EQ(body["done"], 2) << body;
  EXPECT_EQ(state_of("JOB_d1"), "pending");
  EXPECT_EQ(state_of("JOB_d3"), "delayed");

  // JOB_d1 is pending now: a cancel from the delayed list leaves it alone.
  body = body_of(select("cancel", "delayed", {"JOB_d1", "JOB_d3"}));
  EXPECT_EQ(body["done"], 1) << body;
  EXPECT_EQ(body["moved_on"], 1) << body;
  EXPECT_EQ(x().command({"EXISTS", keys().row("JOB_d3")}).integer, 0);
  body = body_of(select("cancel", "pending", {"JOB_d1", "JOB_d2"}));
  EXPECT_EQ(body["done"], 2) << body;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 0);

  seed_dead_ids({"JOB_x", "JOB_y"});
  ASSERT_EQ(enqueue(x(), keys(), "JOB_alive", "p"), EnqueueResult::Enqueued);
  body = body_of(select("delete", "dead", {"JOB_x", "JOB_alive"}));
  EXPECT_EQ(body["done"], 1) << body;
  EXPECT_EQ(body["moved_on"], 1) << "a pending job named on the dead list is not deleted";
  EXPECT_EQ(x().command({"EXISTS", keys().row("JOB_x")}).integer, 0);
  EXPECT_EQ(state_of("JOB_y"), "dead");
  EXPECT_EQ(state_of("JOB_alive"), "pending");
}

TEST_F(SelectStoryTest, OneBoundedBatchOfOneList) {
  seed_dead_ids(numbered_ids(101, "m"));
  HttpAnswer a = select("retry", "dead", numbered_ids(101, "m"));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("at most 100"), std::string::npos) << a.body;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 101) << "nothing done";
  a = select("retry", "pending", {"JOB_m100000"});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("retry acts on dead jobs"), std::string::npos) << a.body;
  EXPECT_EQ(select("run", "dead", {"JOB_m100000"}).status, 400);
  EXPECT_EQ(select("retry", "dead", {}).status, 400);
  EXPECT_EQ(select("retry", "dead", {"not-an-id"}).status, 400);
  EXPECT_EQ(select("explode", "dead", {"JOB_m100000"}).status, 404);
  a = select("retry", "dead", numbered_ids(100, "m"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["done"], 100);
}

TEST_F(SelectStoryTest, RefusedReadOnlyWithoutTokenOrOrigin) {
  seed_dead_ids({"JOB_r"});
  const std::string path = qpath() + "/selection/retry?state=dead&id=JOB_r";
  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, {{"EMQ_URL", server().url()}});
  ASSERT_GT(ro.port(), 0) << ro.output();
  HttpAnswer a =
      request(ro.port(), "POST", path,
              {{"X-EMQ-Token", token_of(port())}, {"Origin", "http://127.0.0.1:" + std::to_string(ro.port())}});
  EXPECT_EQ(a.status, 403) << a.body;
  EXPECT_NE(a.body.find("read-only"), std::string::npos) << a.body;
  a = request(port(), "POST", path, {{"Origin", "http://127.0.0.1:" + std::to_string(port())}});
  EXPECT_EQ(a.status, 403) << a.body;
  a = request(port(), "POST", path, {{"X-EMQ-Token", token_of(port())}, {"Origin", "http://evil.test"}});
  EXPECT_EQ(a.status, 403) << a.body;
  EXPECT_EQ(state_of("JOB_r"), "dead");
}

TEST_F(SelectStoryTest, RetriesAreFailedDelayedJobs) {
  enqueue_delayed("JOB_scheduled");
  seed_retry("JOB_retrying", "timeout");
  const json body = body_of(get(qpath() + "?state=retries"));
  EXPECT_EQ(body["state"], "retries");
  EXPECT_EQ(body["total"], 1) << body;
  EXPECT_EQ(body["delayed"], 2);
  EXPECT_EQ(body["scanned"], 2);
  ASSERT_EQ(body["jobs"].size(), 1u) << body;
  EXPECT_EQ(body["jobs"][0]["id"], "JOB_retrying");
  EXPECT_EQ(body["jobs"][0]["failures"], 1);
  EXPECT_EQ(body["jobs"][0]["error"]["text"], "timeout");
  EXPECT_EQ(body["jobs"][0]["time_ms"], std::stoll(x().command({"ZSCORE", keys().delayed, "JOB_retrying"}).str))
      << "the next retry is its due time";
  EXPECT_EQ(body_of(get(qpath() + "?state=delayed"))["total"], 2) << "Delayed still lists both";
}

TEST_F(SelectStoryTest, PageSizesAre50100Or500) {
  seed_pending(x(), keys(), numbered_ids(120, "s"), [](std::size_t) { return "p"; });
  json body = body_of(get(qpath() + "?size=100&page=2"));
  EXPECT_EQ(body["page_size"], 100);
  EXPECT_EQ(body["pages"], 2);
  EXPECT_EQ(body["jobs"].size(), 20u);
  EXPECT_EQ(body["jobs"][0]["id"], "JOB_s100100");
  body = body_of(get(qpath() + "?size=500"));
  EXPECT_EQ(body["jobs"].size(), 120u);
  EXPECT_EQ(body_of(get(qpath()))["page_size"], 50);
  const HttpAnswer a = get(qpath() + "?size=7");
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("50, 100 or 500"), std::string::npos) << a.body;
}

// A story needs the stream: an executor whose transitions carry it, as emqd's do.
class StoryTest : public SelectStoryTest {
 protected:
  void SetUp() override {
    SelectStoryTest::SetUp();
    ASSERT_FALSE(x().command(events_write(keys(), 1000)).is_error());
    ConnectionOptions o = server().options();
    o.events = std::make_shared<EventsBook>();
    ex_ = std::make_unique<Executor>(o);
  }
  // Claims the queue's one pending job and fails it with error: the
  // queue's max_attempts is 1, so it dies.
  void run_and_die(const std::string& error) {
    const std::vector<ClaimedJob> got = claim(*ex_, keys(), {30000, 1, 0});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(fail(*ex_, keys(), {got[0].id, got[0].lease_epoch}, {error, 1, 0, false}), FailResult::Dead);
  }
  // A new job that ran and died twice (retried between), with these errors.
  std::string died_twice(const std::string& first, const std::string& second) {
    const std::string id = mint_job_id();
    EXPECT_EQ(enqueue(*ex_, keys(), id, "p"), EnqueueResult::Enqueued);
    run_and_die(first);
    EXPECT_EQ(retry_job(*ex_, keys(), id), RetryJobResult::Moved);
    run_and_die(second);
    return id;
  }
  json story_of(const std::string& id) {
    const HttpAnswer a = get(qpath() + "/jobs/" + id);
    EXPECT_EQ(a.status, 200) << a.body;
    return body_of(a);
  }
  std::unique_ptr<Executor> ex_;
};

TEST_F(StoryTest, DeadRetriedTwiceHasThreeRuns) {
  const std::string id = died_twice("first: connection refused", "second: timeout");
  ASSERT_EQ(retry_job(*ex_, keys(), id), RetryJobResult::Moved);
  run_and_die("third: disk full");

  const json body = story_of(id);
  const json& story = body["story"];
  ASSERT_EQ(story["runs"].size(), 3u) << story;
  const char* errors[] = {"first: connection refused", "second: timeout", "third: disk full"};
  for (int i = 0; i < 3; ++i) {
    const json& run = story["runs"][i];
    EXPECT_EQ(run["outcome"], "died") << run;
    EXPECT_EQ(run["error"]["text"], errors[i]) << run;
    EXPECT_EQ(run["attempt"], "1") << "a retry starts its attempts again";
    EXPECT_GE(run["ended_ms"].get<std::int64_t>(), run["started_ms"].get<std::int64_t>());
    EXPECT_EQ(run["run_ms"], run["ended_ms"].get<std::int64_t>() - run["started_ms"].get<std::int64_t>());
  }
  EXPECT_TRUE(story["cut"].is_null()) << story;
  EXPECT_EQ(story["enqueued_ms"], static_cast<std::int64_t>(*minted_at_ms(id)));
  EXPECT_EQ(story["started_ms"], story["runs"][0]["started_ms"]);
  EXPECT_EQ(story["finished_ms"], story["runs"][2]["ended_ms"]);
  EXPECT_EQ(story["run_ms"], story["runs"][0]["run_ms"].get<std::int64_t>() +
                                 story["runs"][1]["run_ms"].get<std::int64_t>() +
                                 story["runs"][2]["run_ms"].get<std::int64_t>());
}

TEST_F(StoryTest, RetriedThenRunningThenDone) {
  const std::string id = mint_job_id();
  ASSERT_EQ(enqueue(*ex_, keys(), id, "p"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> got = claim(*ex_, keys(), {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(fail(*ex_, keys(), {id, got[0].lease_epoch}, {"flaky", 5, 0, false}), FailResult::Retry);
  got = claim(*ex_, keys(), {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  json story = story_of(id)["story"];
  ASSERT_EQ(story["runs"].size(), 2u) << story;
  EXPECT_EQ(story["runs"][0]["outcome"], "failed");
  EXPECT_EQ(story["runs"][1]["outcome"], "running");
  EXPECT_EQ(story["runs"][1]["attempt"], "2");
  EXPECT_TRUE(story["finished_ms"].is_null()) << "not finished while it runs";
  ASSERT_EQ(complete(*ex_, keys(), {id, got[0].lease_epoch}, 60000, "ok"), CompleteResult::Completed);
  story = story_of(id)["story"];
  EXPECT_EQ(story["runs"][1]["outcome"], "completed");
  EXPECT_EQ(story["finished_ms"], story["runs"][1]["ended_ms"]);
}

TEST_F(StoryTest, TrimmedIsSaidNotGuessed) {
  const std::string id = died_twice("gone from the stream", "still there");
  // Another job's entries, then the stream cut to its latest: the job's
  // first run (and its enqueue) are trimmed away.
  for (int i = 0; i < 5; ++i) ASSERT_EQ(enqueue(*ex_, keys(), mint_job_id(), "p"), EnqueueResult::Enqueued);
  ASSERT_FALSE(x().command({"XTRIM", keys().events, "MAXLEN", "8"}).is_error());
  const json story = story_of(id)["story"];
  ASSERT_FALSE(story["cut"].is_null()) << story;
  EXPECT_NE(story["cut"].get<std::string>().find("no longer holds 1 of the 2 failed runs"), std::string::npos) << story;
  ASSERT_GE(story["runs"].size(), 1u) << story;
  EXPECT_EQ(story["runs"].back()["error"]["text"], "still there");
  for (const json& run : story["runs"]) EXPECT_NE(run["error"]["text"], "gone from the stream");
}

TEST_F(StoryTest, NoEventsNoStory) {
  ASSERT_FALSE(x().command(events_write(keys(), 0)).is_error());
  ASSERT_EQ(enqueue(x(), keys(), "JOB_quiet", "p"), EnqueueResult::Enqueued);
  const json body = story_of("JOB_quiet");
  EXPECT_EQ(body["keeps_events"], false);
  EXPECT_TRUE(body["story"]["runs"].empty());
}

TEST_F(SelectStoryTest, RecentHistoryIsPerQueue) {
  const std::int64_t minute = x().server_time_ms() / kHistoryMinuteMs;
  // Samples two and one minutes back and this minute, then the counters
  // now: 30 completed (2 died), then 0, then 5 in the minute under way.
  for (const auto& [back, value] :
       {std::pair<int, const char*>{2, "100 100 0 1"}, {1, "130 130 0 3"}, {0, "130 130 0 3"}}) {
    ASSERT_FALSE(x().command({"HSET", history_key(queue(), HistoryGrain::Minute), std::to_string(minute - back), value})
                     .is_error());
  }
  ASSERT_FALSE(x().command({"HSET", keys().stats, "claimed", "135", "completed", "135", "dead", "3"}).is_error());
  ASSERT_FALSE(x().command({"SADD", "{emq}:queues", queue()}).is_error());
  const HttpAnswer a = get("/api/history/recent");
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = body_of(a);
  EXPECT_EQ(body["interval_ms"], 60000);
  EXPECT_EQ(body["to_ms"].get<std::int64_t>() - body["from_ms"].get<std::int64_t>(), 10 * 60000);
  const json& points = body["queues"][queue()];
  ASSERT_EQ(points.size(), 3u) << points;
  EXPECT_EQ(points[0]["t"], (minute - 2) * kHistoryMinuteMs);
  EXPECT_EQ(points[0]["completed"], 30);
  EXPECT_EQ(points[0]["dead"], 2);
  EXPECT_EQ(points[1]["completed"], 0);
  EXPECT_EQ(points[2]["t"], minute * kHistoryMinuteMs);
  EXPECT_EQ(points[2]["completed"], 5) << "the minute under way, closed by the counters now";
  // The same numbers as /api/history for that queue.
  const json one = body_of(get("/api/history?range=1h&queue=" + url_encode(queue())));
  EXPECT_EQ(one["points"][0]["completed"], 30);
}

TEST_F(SelectStoryTest, ServerPanelIsBounded) {
  const HttpAnswer a = get("/api/server");
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = body_of(a);
  const std::string info = x().command({"INFO", "server"}).str;
  EXPECT_NE(info.find("valkey_version:" + body["version"].get<std::string>()), std::string::npos) << body;
  EXPECT_EQ(body["mode"], "standalone");
  EXPECT_GT(body["used_memory"].get<std::int64_t>(), 0);
  EXPECT_GE(body["used_memory_peak"].get<std::int64_t>(), body["used_memory"].get<std::int64_t>() / 2);
  EXPECT_EQ(body["maxmemory_policy"], x().command({"CONFIG", "GET", "maxmemory-policy"}).elements[1].str);
  EXPECT_GE(body["connected_clients"].get<std::int64_t>(), 1);
  EXPECT_TRUE(body.contains("module"));
  EXPECT_EQ(body["executor"], body["module"].is_null() ? "scripted" : "native");
  EXPECT_LT(a.body.size(), 1000u) << "bounded: the named fields, not INFO's text";
}

}  // namespace
}  // namespace echomq::test
