// `emq web` and the fleet, over real sockets against a real server: the
// daemons and the jobs they run (/api/daemons, ghosts left out), Quiet and
// Stop (the signal sent, guarded as every action), the Pause form's who,
// why and for how long, and a queue that no live daemon serves.
#include <gtest/gtest.h>

#include "echomq/daemons.h"
#include "echomq/keyspace.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "../registry_beat.h"
#include "web_fixture.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

class WebFleetTest : public WebApiTest {
 protected:
  // A daemon's beat as emqd writes it, serving this test's queue.
  DaemonInfo beat(const std::string& host, std::vector<DaemonJob> jobs = {}) {
    return daemon_beat(x(), host, queue(), std::move(jobs));
  }
  void write(const DaemonInfo& b, std::int64_t beat_ms = 5000) { write_beat(x(), b, beat_ms); }
  void TearDown() override {
    x().command({"DEL", std::string(kDaemonsKey)});
    WebApiTest::TearDown();
  }
};

TEST_F(WebFleetTest, DaemonsListsTheLiveWithTheirJobsAndLeavesGhostsOut) {
  const std::int64_t started = x().server_time_ms() - 4000;
  const DaemonInfo live = beat("web-a", {{queue(), "JOB_running", 2, started, std::string("50%")}});
  write(live);
  x().command({"ZADD", std::string(kDaemonsKey), std::to_string(x().server_time_ms()), "web-ghost-1-abcdef"});

  const HttpAnswer a = get("/api/daemons");
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = body_of(a);
  EXPECT_EQ(body["ghosts"], 1);
  ASSERT_EQ(body["daemons"].size(), 1u) << a.body;
  const json& d = body["daemons"][0];
  EXPECT_EQ(d["id"], live.id);
  EXPECT_EQ(d["host"], "web-a");
  EXPECT_EQ(d["state"], "running");
  EXPECT_EQ(d["queues"], json::array({queue()}));
  EXPECT_EQ(d["busy"], 1);
  EXPECT_EQ(d["slots"], 4);
  EXPECT_NEAR(d["beat_every_ms"].get<double>(), 5000, 200) << "six beats of expiry give the beat back";
  ASSERT_EQ(d["jobs"].size(), 1u);
  EXPECT_EQ(d["jobs"][0]["id"], "JOB_running");
  EXPECT_EQ(d["jobs"][0]["attempt"], 2);
  EXPECT_EQ(d["jobs"][0]["started_ms"], started);
  EXPECT_EQ(d["jobs"][0]["progress"], "50%");
  EXPECT_EQ(get("/daemons").status, 200) << "the page's own path";
}

TEST_F(WebFleetTest, QuietAndStopSendTheSignalOnlyAsEveryActionIsSent) {
  const DaemonInfo b = beat("web-b");
  write(b);
  const DaemonKeys k(b.id);
  const std::string path = "/api/daemons/" + b.id + "/quiet";
  EXPECT_EQ(request(port(), "POST", path).status, 403) << "no token, no origin";
  EXPECT_EQ(x().command({"EXISTS", k.signals}).integer, 0) << "a refused action sent nothing";

  const std::int64_t before = x().server_time_ms();
  HttpAnswer a = act(path);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_GE(body_of(a)["sent_ms"].get<std::int64_t>(), before);
  EXPECT_EQ(body_of(a)["signal"], "quiet");
  a = act("/api/daemons/" + b.id + "/stop");
  ASSERT_EQ(a.status, 200) << a.body;
  const Reply list = x().command({"LRANGE", k.signals, "0", "-1"});
  ASSERT_EQ(list.elements.size(), 2u);
  EXPECT_EQ(list.elements[0].str, "quiet");
  EXPECT_EQ(list.elements[1].str, "stop");
  EXPECT_GT(x().command({"PTTL", k.signals}).integer, 0) << "a ghost's requests must not pile up";

  EXPECT_EQ(act("/api/daemons/nobody-1-abcdef/quiet").status, 404);
  EXPECT_EQ(act("/api/daemons/x:work/quiet").status, 400) << "not a daemon id";
  EXPECT_EQ(act("/api/daemons/" + b.id + "/restart").status, 404);

  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, Env{{"EMQ_URL", server().url()}});
  EXPECT_EQ(request(ro.port(), "POST", path, {{"Origin", "http://127.0.0.1:" + std::to_string(ro.port())}}).status,
            403);
}

TEST_F(WebFleetTest, PauseTakesWhoWhyAndForHowLongFromTheQuery) {
  register_queues(x(), {queue()});
  HttpAnswer a = act(qpath() + "/pause?reason=ledger%20migration&for=2h&by=ops%40bastion");
  ASSERT_EQ(a.status, 200) << a.body;
  QueueStats s = stats(x(), keys());
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.pause.by, "ops@bastion");
  EXPECT_EQ(s.pause.reason, "ledger migration");
  ASSERT_TRUE(s.pause.until_ms.has_value());
  EXPECT_NEAR(static_cast<double>(*s.pause.until_ms - x().server_time_ms()), 7200000, 60000);
  EXPECT_NE(body_of(a)["pause"].get<std::string>().find("by ops@bastion (ledger migration), until 20"),
            std::string::npos)
      << a.body;

  const json q = body_of(get(qpath()))["queue"];
  EXPECT_EQ(q["pause"]["by"], "ops@bastion");
  EXPECT_EQ(q["pause"]["until_ms"], *s.pause.until_ms);
  EXPECT_NE(q["pause_text"].get<std::string>().find("ledger migration"), std::string::npos);

  EXPECT_EQ(act(qpath() + "/pause?for=soon").status, 400);
  EXPECT_EQ(stats(x(), keys()).pause.reason, "ledger migration") << "a refused pause changed the pause";
  ASSERT_EQ(act(qpath() + "/pause").status, 200);
  EXPECT_EQ(stats(x(), keys()).pause.by, "emq web") << "who, when the form leaves it empty";
  ASSERT_EQ(act(qpath() + "/resume").status, 200);
  EXPECT_EQ(x().command({"HGETALL", keys().meta}).elements.size(), 0u);

  // Who and why are shown by every tool: plain text only.
  a = act(qpath() + "/pause?reason=" + url_encode("red\x1b[31m"));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("control character"), std::string::npos) << a.body;
  EXPECT_FALSE(stats(x(), keys()).paused) << "a refused pause wrote nothing";
}

TEST_F(WebFleetTest, AQueueNoLiveDaemonServesIsMarked) {
  enqueue(x(), keys(), "JOB_waits", "p");
  register_queues(x(), {queue()});
  auto served = [&] {
    const HttpAnswer a = get("/api/queues");
    const json body = body_of(a);  // the loop's range must outlive the line
    for (const json& q : body["queues"]) {
      if (q["queue"].get<std::string>() == queue()) return q["served_by"].get<int>();
    }
    ADD_FAILURE() << queue() << " is not in " << a.body;
    return -1;
  };
  EXPECT_EQ(served(), 0);
  EXPECT_EQ(body_of(get(qpath()))["queue"]["served_by"], 0);
  write(beat("web-c"));
  EXPECT_EQ(served(), 1);
  write(beat("web-d"));
  EXPECT_EQ(body_of(get(qpath()))["queue"]["served_by"], 2);
}

// One key of another type in the registry hides neither the fleet nor the
// queues: the other daemons are listed with the broken key named in
// `problems`, and the queues are shown whatever the registry holds.
TEST_F(WebFleetTest, AForeignKeyHidesNeitherFleetNorQueues) {
  enqueue(x(), keys(), "JOB_waits", "p");
  register_queues(x(), {queue()});
  const DaemonInfo live = beat("web-e");
  write(live);
  const auto mine = [&](const json& overview) {
    for (const json& q : overview["queues"]) {
      if (q["queue"] == queue()) return q;
    }
    return json();
  };
  const std::string broken = "web-f-1-0a0b0c";
  x().command({"ZADD", std::string(kDaemonsKey), std::to_string(x().server_time_ms()), broken});
  x().command({"SET", DaemonKeys(broken).hash, "oops"});

  HttpAnswer a = get("/api/daemons");
  ASSERT_EQ(a.status, 200) << a.body;
  json body = body_of(a);
  ASSERT_EQ(body["daemons"].size(), 1u) << a.body;
  EXPECT_EQ(body["daemons"][0]["id"], live.id);
  ASSERT_EQ(body["problems"].size(), 1u) << a.body;
  EXPECT_NE(body["problems"][0].get<std::string>().find(DaemonKeys(broken).hash + " cannot be read: WRONGTYPE"),
            std::string::npos)
      << a.body;
  a = get("/api/queues");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(mine(body_of(a))["served_by"], 1) << a.body;
  EXPECT_EQ(act("/api/daemons/" + broken + "/quiet").status, 502) << "its key cannot carry a signal";

  // The registry itself of another type: the queues are shown all the same,
  // with nobody knowing who serves them.
  x().command({"DEL", std::string(kDaemonsKey)});
  x().command({"SET", std::string(kDaemonsKey), "oops"});
  a = get("/api/queues");
  ASSERT_EQ(a.status, 200) << a.body;
  body = body_of(a);
  EXPECT_EQ(mine(body)["pending"], 1) << a.body;
  EXPECT_TRUE(mine(body)["served_by"].is_null()) << a.body;
  EXPECT_NE(body["registry_problems"][0].get<std::string>().find(std::string(kDaemonsKey) + " cannot be read"),
            std::string::npos)
      << a.body;
  a = get(qpath());
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(body_of(a)["queue"]["served_by"].is_null()) << a.body;
  a = get("/api/daemons");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(body_of(a)["daemons"].empty());
  EXPECT_FALSE(body_of(a)["problems"].empty()) << a.body;
}

}  // namespace
}  // namespace echomq::test
