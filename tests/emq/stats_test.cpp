// emq stats: the aligned table, the JSON array, and the registry of queues.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/flows.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class StatsCli : public CliTest {
 protected:
  // pending 2, active 1, delayed 1, dead 1, waiting 1 (a parent), paused;
  // claimed 2, dead 1.
  void seed() {
    for (const char* id : {"JOB_a", "JOB_b", "JOB_c", "JOB_d"}) {
      ASSERT_EQ(enqueue(x(), keys(), id, "p"), EnqueueResult::Enqueued);
    }
    EnqueueOptions later;
    later.due_ms = x().server_time_ms() + 3600000;
    ASSERT_EQ(enqueue(x(), keys(), "JOB_e", "p", later), EnqueueResult::Enqueued);
    std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 2, 0});
    ASSERT_EQ(jobs.size(), 2u);
    FailArgs permanent;
    permanent.error = "bad input";
    permanent.permanent = true;
    ASSERT_EQ(fail(x(), keys(), {jobs[1].id, jobs[1].lease_epoch}, permanent), FailResult::Dead);
    FlowNode parent;
    parent.queue = queue();
    parent.payload = "p";
    parent.id = "JOB_p";
    parent.children.push_back({"stats-kids", "c", 0, "fail", "JOB_c", {}});
    enqueue_flow(x(), parent);
    pause(x(), keys());
    register_queues(x(), {queue()});
  }
};

TEST_F(StatsCli, TableShowsDepthsPausedAndCounters) {
  seed();
  EmqResult r = emq({"stats", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(cells_of(lines[0]),
            (std::vector<std::string>{"QUEUE", "PAUSED", "PENDING", "ACTIVE", "DELAYED", "DEAD", "WAITING", "CLAIMED",
                                      "COMPLETED", "RETRIED", "DIED", "REAPED", "RELEASED"}));
  EXPECT_EQ(cells_of(lines[1]),
            (std::vector<std::string>{queue(), "yes", "2", "1", "1", "1", "1", "2", "0", "0", "1", "0", "0"}));
  // Aligned: each number ends where its header ends.
  EXPECT_EQ(lines[0].find("PENDING") + 7, lines[1].find(" 2 ") + 2) << r.out;
}

TEST_F(StatsCli, JsonHasStableFields) {
  seed();
  EmqResult r = emq({"stats", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  nlohmann::json want = {
      {"queue", queue()},
      {"paused", true},
      {"pending", 2},
      {"active", 1},
      {"delayed", 1},
      {"dead", 1},
      {"waiting", 1},
      {"counters", {{"claimed", 2}, {"completed", 0}, {"retried", 0}, {"dead", 1}, {"reaped", 0}, {"released", 0}}}};
  EXPECT_EQ(j[0], want) << j.dump(2);
}

TEST_F(StatsCli, UnknownQueueIsAllZeros) {
  EmqResult r = emq({"stats", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["pending"], 0);
  EXPECT_EQ(j[0]["paused"], false);
  EXPECT_EQ(j[0]["counters"]["claimed"], 0);
}

TEST_F(StatsCli, SeveralQueuesInTheOrderGiven) {
  EmqResult r = emq({"enqueue", queue() + "-b", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = emq({"stats", queue() + "-b", queue() + "-a", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["queue"], queue() + "-b");
  EXPECT_EQ(j[0]["pending"], 1);
  EXPECT_EQ(j[1]["queue"], queue() + "-a");
  EXPECT_EQ(j[1]["pending"], 0);
}

TEST_F(StatsCli, BadQueueNameIsUsage) {
  EmqResult r = emq({"stats", queue(), "no{braces}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
}

// With no queue named, stats lists every queue of {emq}:queues: this needs
// a server of its own, since other tests register queues too.
TEST(StatsCliRegistry, NoQueueListsEveryRegisteredQueue) {
  ValkeyServer server;
  const Env env = {{"EMQ_URL", server.url()}};

  EmqResult r = run_emq({"stats"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no queues are known"), std::string::npos) << r.err;
  r = run_emq({"stats", "--json"}, env);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array());

  ASSERT_EQ(run_emq({"enqueue", "thumbs", "x"}, env).exit_code, 0);
  ASSERT_EQ(run_emq({"enqueue", "emails", "y"}, env).exit_code, 0);
  ASSERT_EQ(run_emq({"enqueue", "emails", "z"}, env).exit_code, 0);

  r = run_emq({"stats", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u) << j.dump();
  EXPECT_EQ(j[0]["queue"], "emails");
  EXPECT_EQ(j[0]["pending"], 2);
  EXPECT_EQ(j[1]["queue"], "thumbs");
  EXPECT_EQ(j[1]["pending"], 1);

  r = run_emq({"stats"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(cells_of(lines[1])[0], "emails");
  EXPECT_EQ(cells_of(lines[2])[0], "thumbs");
}

}  // namespace
}  // namespace echomq::test
