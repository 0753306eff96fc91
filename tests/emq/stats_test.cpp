// emq stats: the aligned table, the JSON array, and the registry of queues.
#include <gtest/gtest.h>

#include <cstdlib>

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
    pause(x(), keys(), {"ann@host-a", "deploy of v2", std::nullopt});
    register_queues(x(), {queue()});
  }
};

TEST_F(StatsCli, TableShowsDepthsPausedAndCounters) {
  seed();
  EmqResult r = emq({"stats", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[2], "paused " + queue() + " by ann@host-a (deploy of v2), until resumed");
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
  nlohmann::json want = {{"queue", queue()},
                         {"paused", true},
                         {"pending", 2},
                         {"active", 1},
                         {"delayed", 1},
                         {"dead", 1},
                         {"waiting", 1},
                         {"counters",
                          {{"claimed", 2},
                           {"completed", 0},
                           {"retried", 0},
                           {"dead", 1},
                           {"reaped", 0},
                           {"released", 0},
                           {"duplicates", 0},
                           {"replaced", 0}}},
                         {"pause",
                          {{"by", "ann@host-a"},
                           {"reason", "deploy of v2"},
                           {"until_ms", nullptr},
                           {"ended", false},
                           {"broken_until", nullptr}}}};

  EXPECT_EQ(j[0], want) << j.dump(2);
}

TEST_F(StatsCli, APauseShowsWhoWhyAndItsEnd) {
  ASSERT_EQ(emq({"enqueue", queue(), "x"}).exit_code, 0);
  EmqResult r = emq({"pause", queue(), "--reason", "nightly import", "--for", "2h", "--by", "ops@bastion"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::int64_t until = stats(x(), keys()).pause.until_ms.value_or(0);
  EXPECT_NEAR(static_cast<double>(until - x().server_time_ms()), 7200000, 5000);
  EXPECT_EQ(r.out.rfind("paused " + queue() + " by ops@bastion (nightly import), until 20", 0), 0u) << r.out;

  r = emq({"stats", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json p = nlohmann::json::parse(r.out)[0]["pause"];
  EXPECT_EQ(p["by"], "ops@bastion");
  EXPECT_EQ(p["reason"], "nightly import");
  EXPECT_EQ(p["until_ms"], until);
  EXPECT_EQ(p["ended"], false);

  // An end that has come, before any claim lifted it.
  x().command({"HSET", keys().meta, "paused_until", "1"});
  r = emq({"stats", queue()});
  EXPECT_NE(r.out.find("ended 1970-01-01T00:00:00.001Z (lifted at the next claim)"), std::string::npos) << r.out;
  x().command({"HSET", keys().meta, "paused_until", "soon"});
  r = emq({"stats", queue()});
  EXPECT_NE(r.out.find("paused_until 'soon' is broken"), std::string::npos) << r.out;

  r = emq({"resume", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = emq({"stats", queue(), "--json"});
  EXPECT_TRUE(nlohmann::json::parse(r.out)[0]["pause"].is_null()) << r.out;
  EXPECT_EQ(x().command({"HGETALL", keys().meta}).elements.size(), 0u) << "resume leaves no pause field";
}

// Who paused and why, as another writer may have put them: an escape that
// retitles the window, a bell, a forged line, an 8-bit CSI, a right-to-left
// override. emq prints each escaped, on the lines it meant to print.
TEST_F(StatsCli, ControlBytesInThePauseReachNoTerminal) {
  const std::string by = "eve\x1b]0;owned\x07";
  const std::string reason =
      "deploy\r\npaused other-queue by root\x1b[2J \xc2\x9b"
      "31m \xe2\x80\xae"
      "gpj.exe";
  x().command({"HSET", keys().meta, "paused", "1", "paused_by", by, "paused_reason", reason});
  EmqResult r = emq({"stats", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(terminal_control_in(r.out), "");
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << "the table's two lines and the pause's one: " << r.out;
  EXPECT_EQ(lines[2], "paused " + queue() +
                          " by eve\\x1b]0;owned\\x07 (deploy\\r\\npaused other-queue by root\\x1b[2J \\u009b31m "
                          "\\u202egpj.exe), until resumed")
      << r.out;
  r = emq({"stats", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["pause"]["reason"], reason) << "JSON keeps the bytes, escaped its way";
}

// emq pause takes who and why as plain text only: every tool prints them.
TEST_F(StatsCli, PauseRefusesControlCharactersInWhoAndWhy) {
  for (const auto& [flag, text] : std::vector<std::pair<std::string, std::string>>{{"--reason", "red\x1b[31m"},
                                                                                   {"--reason", "two\nlines"},
                                                                                   {"--reason", "bell\x07"},
                                                                                   {"--reason", "csi \xc2\x9b"},
                                                                                   {"--by",
                                                                                    "\xe2\x80\xae"
                                                                                    "eve"},
                                                                                   {"--by", "not utf-8 \xff"}}) {
    EmqResult r = emq({"pause", queue(), flag, text});
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(flag + " holds a control character"), std::string::npos) << r.err;
    EXPECT_EQ(terminal_control_in(r.err), "") << "the refusal quotes nothing raw";
  }
  EXPECT_FALSE(stats(x(), keys()).paused) << "a refused pause wrote nothing";
  EmqResult r = emq({"pause", queue(), "--reason", "caf\xc3\xa9 \xe2\x98\x95 migration", "--by", "ann"});
  ASSERT_EQ(r.exit_code, 0) << "plain text beyond ASCII is welcome: " << r.err;
  EXPECT_EQ(stats(x(), keys()).pause.reason, "caf\xc3\xa9 \xe2\x98\x95 migration");
}

TEST_F(StatsCli, PauseWithoutByIsSignedUserAtHost) {
  // The test's own USER comes first in emq's environment when it has one.
  const char* own = std::getenv("USER");
  const std::string user = own != nullptr && *own != '\0' ? own : "carol";
  EmqResult r = run_emq({"pause", queue()}, {{"EMQ_URL", server().url()}, {"USER", "carol"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(stats(x(), keys()).pause.by.rfind(user + "@", 0), 0u) << stats(x(), keys()).pause.by;
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"pause", queue(), "--for", "soon"},
                                             {"pause", queue(), "--for", "0s"},
                                             {"pause", queue(), "--reason", std::string(257, 'r')},
                                             {"pause", queue(), "--by", std::string(65, 'b')}}) {
    r = emq(bad);
    EXPECT_EQ(r.exit_code, 2) << bad[2] << ": " << r.err;
    EXPECT_NE(r.err.find(bad[2]), std::string::npos) << r.err;
  }
  EXPECT_EQ(stats(x(), keys()).pause.by.rfind(user + "@", 0), 0u) << "a refused pause changed the pause";
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
