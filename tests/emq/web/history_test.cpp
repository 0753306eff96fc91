// `emq web`'s /api/history over real sockets against a real server: the
// samples a daemon writes read back as per-interval counts (a gap where
// one is missing), every queue summed without a queue, bad ranges refused
// by name, and the history still there after `emq web` and emqd restart:
// it lives on the server.
#include <gtest/gtest.h>
#include <signal.h>

#include "echomq/history.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "wait_for.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

class WebHistoryTest : public WebApiTest {
 protected:
  void sample(const std::string& queue, HistoryGrain g, std::int64_t n, const HistoryCounts& c) {
    ASSERT_FALSE(x().command({"HSET", history_key(queue, g), std::to_string(n), history_value(c)}).is_error());
  }
  json history(const std::string& query) {
    const HttpAnswer a = get("/api/history?" + query);
    EXPECT_EQ(a.status, 200) << a.body;
    return body_of(a);
  }
  // The point of the interval starting at t_ms, or null.
  static json point_at(const json& body, std::int64_t t_ms) {
    for (const json& p : body["points"]) {
      if (p["t"] == t_ms) return p;
    }
    return nullptr;
  }
  void run_jobs(int n) {
    for (int i = 0; i < n; ++i) {
      enqueue(x(), keys(), mint_job_id(), "p");
      std::vector<ClaimedJob> got = claim(x(), keys(), {30000, 1, 0});
      ASSERT_EQ(got.size(), 1u);
      complete(x(), keys(), {got[0].id, got[0].lease_epoch}, 0, "ok");
    }
  }
  std::string daemon_config() const {
    return "valkey:\n  url: " + server_->url() +
           "\nmetrics:\n  listen: \"\"\nlog:\n  level: debug\nshutdown:\n  drain_timeout_s: 5\n"
           "queues:\n  - name: " +
           queue() + "\n    handler: { type: exec, command: [\"/bin/true\"] }\n";
  }
  // The minute a daemon's writer took, once it took one.
  std::optional<std::int64_t> written_minute() {
    Reply r = x().command({"HKEYS", history_key(queue(), HistoryGrain::Minute)});
    if (r.elements.empty()) return std::nullopt;
    return std::stoll(r.elements[0].str);
  }
};

TEST_F(WebHistoryTest, SamplesReadAsCountsPerMinuteWithGapsLeftOut) {
  const std::int64_t now = x().server_time_ms() / kHistoryMinuteMs;
  // Minutes now-10..now-7 sampled, now-6 missing, now-5 sampled: whatever
  // minute it is when the page asks, these are all in the last hour.
  sample(queue(), HistoryGrain::Minute, now - 10, {10, 8, 1, 0});
  sample(queue(), HistoryGrain::Minute, now - 9, {20, 15, 3, 1});
  sample(queue(), HistoryGrain::Minute, now - 8, {20, 15, 3, 1});
  sample(queue(), HistoryGrain::Minute, now - 7, {2, 1, 0, 0});  // the counters were reset
  sample(queue(), HistoryGrain::Minute, now - 5, {9, 9, 0, 0});

  const json body = history("queue=" + url_encode(queue()) + "&range=1h");
  EXPECT_EQ(body["queue"], queue());
  EXPECT_EQ(body["range"], "1h");
  EXPECT_EQ(body["interval_ms"], kHistoryMinuteMs);
  EXPECT_EQ(body["to_ms"].get<std::int64_t>() - body["from_ms"].get<std::int64_t>(), 60 * kHistoryMinuteMs);
  const json first = point_at(body, (now - 10) * kHistoryMinuteMs);
  ASSERT_FALSE(first.is_null()) << body.dump();
  EXPECT_EQ(
      first,
      json({{"t", (now - 10) * kHistoryMinuteMs}, {"claimed", 10}, {"completed", 7}, {"failed", 2}, {"dead", 1}}));
  EXPECT_EQ(point_at(body, (now - 9) * kHistoryMinuteMs)["completed"], 0) << "a quiet minute is a zero";
  EXPECT_EQ(point_at(body, (now - 8) * kHistoryMinuteMs)["claimed"], 0) << "a reset reads 0, not negative";
  EXPECT_TRUE(point_at(body, (now - 7) * kHistoryMinuteMs).is_null()) << "now-6 is missing: a gap";
  EXPECT_TRUE(point_at(body, (now - 6) * kHistoryMinuteMs).is_null());
  EXPECT_EQ(body["points"].size(), 3u) << body.dump();
}

TEST_F(WebHistoryTest, WithoutAQueueEveryQueueIsSummedPerDay) {
  const std::string other = queue() + ".b";
  register_queues(x(), {queue(), other});
  const std::int64_t today = x().server_time_ms() / kHistoryDayMs;
  sample(queue(), HistoryGrain::Day, today - 3, {0, 0, 0, 0});
  sample(queue(), HistoryGrain::Day, today - 2, {100, 90, 10, 2});
  sample(other, HistoryGrain::Day, today - 3, {5, 5, 0, 0});
  sample(other, HistoryGrain::Day, today - 2, {15, 12, 1, 0});

  const json body = history("range=30d");
  EXPECT_TRUE(body["queue"].is_null());
  EXPECT_EQ(body["interval_ms"], kHistoryDayMs);
  const json day = point_at(body, (today - 3) * kHistoryDayMs);
  ASSERT_FALSE(day.is_null()) << body.dump();
  EXPECT_EQ(day["claimed"], 110);
  EXPECT_EQ(day["completed"], 97);
  EXPECT_EQ(day["failed"], 11);
  EXPECT_EQ(day["dead"], 2);

  const json one = history("queue=" + url_encode(other) + "&range=90d");
  EXPECT_EQ(point_at(one, (today - 3) * kHistoryDayMs)["claimed"], 10);
}

TEST_F(WebHistoryTest, ABadRangeOrQueueNameIsRefusedByName) {
  const HttpAnswer range = get("/api/history?range=7d");
  EXPECT_EQ(range.status, 400);
  EXPECT_EQ(body_of(range)["error"], "range '7d' is not one of 1h, 24h, 30d, 90d");
  const HttpAnswer name = get("/api/history?queue=" + url_encode("no/slash"));
  EXPECT_EQ(name.status, 400) << name.body;
  EXPECT_NE(body_of(name)["error"].get<std::string>().find("queue"), std::string::npos) << name.body;
  EXPECT_EQ(history("queue=" + url_encode(queue()))["range"], "24h") << "24h when no range is given";
}

// The daemon writes the sample; the minute before it was written by a
// daemon gone since (seeded). Neither emqd's nor emq web's restart loses it,
// and the restarted daemon does not write the taken minute again.
TEST_F(WebHistoryTest, HistorySurvivesEmqWebAndTheDaemonRestarting) {
  run_jobs(3);
  std::int64_t minute = 0;
  {
    EmqdProcess first(daemon_config());
    ASSERT_TRUE(first.wait_ready()) << first.log();
    ASSERT_TRUE(wait_for([&] { return written_minute().has_value(); }, seconds(10))) << first.log();
    minute = *written_minute();
    first.signal(SIGTERM);
    ASSERT_EQ(first.wait_exit(seconds(20)), 0) << first.log();
  }
  ASSERT_EQ(x().command({"HGET", history_key(queue(), HistoryGrain::Minute), std::to_string(minute)}).str, "3 3 0 0");
  sample(queue(), HistoryGrain::Minute, minute - 1, {0, 0, 0, 0});
  const json before = point_at(history("queue=" + url_encode(queue()) + "&range=1h"), (minute - 1) * kHistoryMinuteMs);
  EXPECT_EQ(
      before,
      json({{"t", (minute - 1) * kHistoryMinuteMs}, {"claimed", 3}, {"completed", 3}, {"failed", 0}, {"dead", 0}}));

  // A second daemon, after more work: its writer's round leaves the taken
  // minute as the first daemon wrote it.
  run_jobs(2);
  EmqdProcess second(daemon_config());
  ASSERT_TRUE(second.wait_log("history writer: minute", seconds(20))) << second.log();
  EXPECT_EQ(x().command({"HGET", history_key(queue(), HistoryGrain::Minute), std::to_string(minute)}).str, "3 3 0 0");

  web_.reset();
  web_ =
      std::make_unique<EmqWeb>(std::vector<std::string>{"--listen", "127.0.0.1:0"}, Env{{"EMQ_URL", server_->url()}});
  ASSERT_GT(port(), 0) << web_->output();
  const json after = history("queue=" + url_encode(queue()) + "&range=1h");
  EXPECT_EQ(point_at(after, (minute - 1) * kHistoryMinuteMs), before) << after.dump();
  // Today so far: from the day's first sample (the first daemon's) to now.
  const json days = history("queue=" + url_encode(queue()) + "&range=30d");
  ASSERT_EQ(days["points"].size(), 1u) << days.dump();
  EXPECT_EQ(days["points"][0]["completed"], 2);
}

}  // namespace
}  // namespace echomq::test
