// The operator's actions of `emq web` (actions_api.h) against a real
// valkey-server and a real `emq web`: Run now on a delayed job, Fire now
// with every answer `emq schedules fire` gives, the limits form validated
// as `emq limit` validates, Delete all dead in batches, and each refused
// under --read-only and without the page's token.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "seed_jobs.h"
#include "wait_for.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class ActionsApiTest : public WebApiTest {
 protected:
  void enqueue_delayed(const std::string& id) {
    ASSERT_EQ(enqueue(x(), keys(), id, "p", {0, x().server_time_ms() + 3600000}), EnqueueResult::Enqueued);
  }
  std::string state_of(const std::string& id) { return x().command({"HGET", keys().row(id), "state"}).str; }
  void publish(const std::string& name, const std::string& overlap) {
    ASSERT_FALSE(x().command({"HSET", keys().schedules, name,
                              R"({"every_ms":3600000,"timezone":"UTC","lane":0,"overlap":")" + overlap +
                                  R"(","misfire_grace_ms":5000})"})
                     .is_error());
  }
};

TEST_F(ActionsApiTest, RunNowMovesADelayedJobToPendingOrSaysItIsNot) {
  enqueue_delayed("JOB_later");
  HttpAnswer a = act(qpath() + "/jobs/JOB_later/promote");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["promoted"], true);
  EXPECT_EQ(body_of(a)["id"], "JOB_later");
  EXPECT_EQ(state_of("JOB_later"), "pending");
  EXPECT_EQ(claim(x(), keys(), {30000, 5, 0}).size(), 1u) << "it runs now, an hour early";

  a = act(qpath() + "/jobs/JOB_later/promote");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "not_delayed");
  EXPECT_NE(body_of(a)["error"].get<std::string>().find("not delayed any more"), std::string::npos) << a.body;
  EXPECT_EQ(state_of("JOB_later"), "active") << "nothing changed";
  EXPECT_EQ(act(qpath() + "/jobs/not-an-id/promote").status, 400);
}

TEST_F(ActionsApiTest, FireNowAnswersAsTheCliDoes) {
  publish("hourly", "skip");
  HttpAnswer a = act(qpath() + "/schedules/hourly/fire");
  ASSERT_EQ(a.status, 200) << a.body;
  const std::string job = body_of(a)["job"];
  EXPECT_EQ(body_of(a)["fired"], true);
  EXPECT_EQ(state_of(job), "pending");
  EXPECT_EQ(x().command({"HGET", keys().row(job), "schedule"}).str, "hourly");

  // overlap skip, and the last fire's job has not run: held, as the CLI's exit 4.
  // A fire marks the server's millisecond, and a second fire within the same
  // one meets the marker's rule first (marker_ahead): the next comes later.
  const std::int64_t fired_by = x().server_time_ms();
  ASSERT_TRUE(wait_for([&] { return x().server_time_ms() > fired_by; }, std::chrono::seconds(5)));
  a = act(qpath() + "/schedules/hourly/fire");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "skipped");
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 1);

  publish("ahead", "allow");
  const std::int64_t later = x().server_time_ms() + 3600000;
  ASSERT_EQ(enqueue_cron(x(), keys(), mint_job_id(), "", CronFire{"ahead", later, 0, false}), CronFireResult::Enqueued);
  a = act(qpath() + "/schedules/ahead/fire");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "marker_ahead");

  ASSERT_FALSE(x().command({"HSET", keys().schedules, "broken", "not json"}).is_error());
  a = act(qpath() + "/schedules/broken/fire");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "broken");

  a = act(qpath() + "/schedules/" + url_encode("<img src=x onerror=alert(1)>") + "/fire");
  EXPECT_EQ(a.status, 404) << a.body;
  EXPECT_EQ(body_of(a)["outcome"], "no_schedule");
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 2) << "only the first fires and the one ahead enqueued";
}

TEST_F(ActionsApiTest, LimitsAreSetClearedAndABadValueNamesItsField) {
  HttpAnswer a = act(qpath() + "/limits?max_active=7&rate=" + url_encode("100/1s"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["limits"]["max_active"], 7);
  EXPECT_EQ(body_of(a)["limits"]["rate"]["max"], 100);
  json l = body_of(get(qpath()))["queue"]["limits"];
  EXPECT_EQ(l["max_active"], 7) << l;
  EXPECT_EQ(l["rate"]["window_ms"], 1000) << l;

  // Refused as `emq limit` refuses it; neither value is written.
  a = act(qpath() + "/limits?max_active=3&rate=" + url_encode("100/lunchtime"));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(body_of(a)["error"].get<std::string>().rfind("rate: expected N/PERIOD", 0), 0u) << a.body;
  a = act(qpath() + "/limits?max_active=0");
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(body_of(a)["error"].get<std::string>().rfind("max_active: expected 1..1000000 or off", 0), 0u) << a.body;
  EXPECT_EQ(act(qpath() + "/limits").status, 400);
  EXPECT_EQ(body_of(get(qpath()))["queue"]["limits"]["max_active"], 7) << "nothing written";

  a = act(qpath() + "/limits?max_active=off&rate=off");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(body_of(get(qpath()))["queue"]["limits"].is_null());
}

TEST_F(ActionsApiTest, DeleteAllDeadEmptiesDeadInBatchesAndLeavesTheRest) {
  const std::vector<std::string> ids = numbered_ids(2500, "d");
  seed_dead(
      x(), keys(), ids, [](std::size_t) { return "p"; }, [](std::size_t) { return "boom"; });
  ASSERT_EQ(enqueue(x(), keys(), "JOB_alive", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(stats(x(), keys()).dead, 2500);
  HttpAnswer a = act(qpath() + "/dead/purge");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["deleted"], 2500);
  EXPECT_EQ(stats(x(), keys()).dead, 0);
  EXPECT_EQ(x().command({"EXISTS", keys().row(ids.front())}).integer, 0) << "rows go with their ids";
  EXPECT_EQ(state_of("JOB_alive"), "pending");
  a = act(qpath() + "/dead/purge");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["deleted"], 0);
}

TEST_F(ActionsApiTest, EveryActionIsRefusedReadOnlyAndWithoutTheToken) {
  enqueue_delayed("JOB_later");
  publish("hourly", "allow");
  seed_dead(
      x(), keys(), {"JOB_dead"}, [](std::size_t) { return "p"; }, [](std::size_t) { return "e"; });
  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, {{"EMQ_URL", server().url()}});
  ASSERT_GT(ro.port(), 0) << ro.output();
  const std::string ro_origin = "http://127.0.0.1:" + std::to_string(ro.port());
  for (const std::string path :
       {"/jobs/JOB_later/promote", "/schedules/hourly/fire", "/limits?max_active=2", "/dead/purge"}) {
    HttpAnswer a =
        request(ro.port(), "POST", qpath() + path, {{"X-EMQ-Token", token_of(port())}, {"Origin", ro_origin}});
    EXPECT_EQ(a.status, 403) << path << a.body;
    EXPECT_NE(a.body.find("read-only"), std::string::npos) << a.body;
    a = request(port(), "POST", qpath() + path, {{"Origin", "http://127.0.0.1:" + std::to_string(port())}});
    EXPECT_EQ(a.status, 403) << path << a.body;
    a = request(port(), "POST", qpath() + path, {{"X-EMQ-Token", token_of(port())}, {"Origin", "http://evil.test"}});
    EXPECT_EQ(a.status, 403) << path << a.body;
  }
  EXPECT_EQ(state_of("JOB_later"), "delayed");
  EXPECT_EQ(stats(x(), keys()).dead, 1);
  EXPECT_EQ(stats(x(), keys()).pending, 0);
  EXPECT_TRUE(body_of(get(qpath()))["queue"]["limits"].is_null());
}

}  // namespace
}  // namespace echomq::test
