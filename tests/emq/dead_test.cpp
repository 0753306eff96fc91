// emq dead list, emq dead retry (all, --limit, or by id) and emq dead delete.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class DeadCli : public CliTest {
 protected:
  // Enqueues, claims and permanently fails each id, in order.
  void kill_jobs(const std::vector<std::string>& ids, const std::string& error) {
    for (const std::string& id : ids) {
      ASSERT_EQ(enqueue(x(), keys(), id, "p"), EnqueueResult::Enqueued);
      std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
      ASSERT_EQ(jobs.size(), 1u);
      FailArgs permanent;
      permanent.error = error;
      permanent.permanent = true;
      ASSERT_EQ(fail(x(), keys(), {id, jobs[0].lease_epoch}, permanent), FailResult::Dead);
    }
  }
};

TEST_F(DeadCli, ListShowsIdTimeAttemptsAndFirstLineOfError) {
  const std::int64_t before = x().server_time_ms();
  kill_jobs({"JOB_d1", "JOB_d2"}, "bad input\nat line 3");
  EmqResult r = emq({"dead", "list", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"ID", "DIED", "ATTEMPTS", "FAILURES", "ERROR"}));
  std::vector<std::string> row = cells_of(lines[1]);
  ASSERT_GE(row.size(), 5u) << lines[1];
  EXPECT_EQ(row[0], "JOB_d1");
  EXPECT_EQ(row[1].size(), 24u) << row[1] << " is not like 2024-05-01T12:00:00.123Z";
  EXPECT_EQ(row[1].back(), 'Z');
  EXPECT_EQ(row[2], "1");
  EXPECT_EQ(row[3], "1");
  EXPECT_NE(lines[1].find("bad input ..."), std::string::npos) << lines[1];
  EXPECT_EQ(cells_of(lines[2])[0], "JOB_d2");

  r = emq({"dead", "list", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["id"], "JOB_d1");
  EXPECT_EQ(j[0]["error"], "bad input\nat line 3");
  EXPECT_EQ(j[0]["attempts"], 1);
  EXPECT_EQ(j[0]["failures"], 1);
  const std::int64_t died = j[0]["died_ms"].get<std::int64_t>();
  EXPECT_GE(died, before);
  EXPECT_LE(died, x().server_time_ms());
  EXPECT_EQ(j[0]["died_ms"], std::stoll(x().command({"ZSCORE", keys().dead, "JOB_d1"}).str));
  EXPECT_TRUE(j[0]["died_at"].is_string());
  EXPECT_EQ(j[1]["id"], "JOB_d2");
}

TEST_F(DeadCli, ListLimitSaysHowManyMore) {
  kill_jobs({"JOB_l1", "JOB_l2", "JOB_l3"}, "e");
  EmqResult r = emq({"dead", "list", queue(), "--limit", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["id"], "JOB_l1");
  EXPECT_EQ(j[1]["id"], "JOB_l2");
  EXPECT_NE(r.err.find("showing the 2 oldest of 3 dead jobs"), std::string::npos) << r.err;
}

TEST_F(DeadCli, EmptyListSaysSo) {
  EmqResult r = emq({"dead", "list", queue()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "emq: no dead jobs in queue " + queue() + "\n");
  r = emq({"dead", "list", queue(), "--json"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array());
}

TEST_F(DeadCli, RetryMovesOldestFirstAndPrintsTheCount) {
  kill_jobs({"JOB_r1", "JOB_r2", "JOB_r3"}, "e");
  EmqResult r = emq({"dead", "retry", queue(), "--limit", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  QueueStats s = stats(x(), keys());
  EXPECT_EQ(s.dead, 1);
  EXPECT_EQ(s.pending, 2);
  EXPECT_EQ(inspect(x(), keys(), "JOB_r1")->fields.at("state"), "pending");
  EXPECT_EQ(inspect(x(), keys(), "JOB_r1")->fields.at("attempts"), "0");
  EXPECT_EQ(inspect(x(), keys(), "JOB_r3")->fields.at("state"), "dead");

  r = emq({"dead", "retry", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = emq({"dead", "retry", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_EQ(stats(x(), keys()).pending, 3);
}

TEST_F(DeadCli, RetryWithoutLimitMovesMoreThanOneSlice) {
  // Past the 1000 a single retry_dead call moves, seeded in one script-free
  // pipeline so the test stays fast.
  std::vector<Command> seed;
  for (int i = 0; i < 1500; ++i) {
    const std::string id = "JOB_s" + std::to_string(i);
    seed.push_back({"HSET", keys().row(id), "state", "dead", "attempts", "5", "payload", "p"});
    seed.push_back({"ZADD", keys().dead, std::to_string(1000 + i), id});
  }
  x().pipeline(seed);
  EmqResult r = emq({"dead", "retry", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1500\n");
  EXPECT_EQ(stats(x(), keys()).dead, 0);
  EXPECT_EQ(stats(x(), keys()).pending, 1500);
}

TEST_F(DeadCli, RetryByIdMovesOnlyThoseNamed) {
  kill_jobs({"JOB_i1", "JOB_i2", "JOB_i3"}, "e");
  EmqResult r = emq({"dead", "retry", queue(), "JOB_i3", "JOB_i1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  EXPECT_EQ(r.err, "");
  for (const char* id : {"JOB_i1", "JOB_i3"}) {
    EXPECT_EQ(inspect(x(), keys(), id)->fields.at("state"), "pending") << id;
    EXPECT_EQ(inspect(x(), keys(), id)->fields.at("attempts"), "0") << id;
    EXPECT_EQ(inspect(x(), keys(), id)->fields.at("failures"), "1") << id << ": failures are kept";
  }
  EXPECT_EQ(inspect(x(), keys(), "JOB_i2")->fields.at("state"), "dead");
}

TEST_F(DeadCli, RetryOfAJobThatIsNotDeadIsExitOneAndLeavesIt) {
  kill_jobs({"JOB_n1"}, "e");
  ASSERT_EQ(enqueue(x(), keys(), "JOB_n2", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"dead", "retry", queue(), "JOB_n1", "JOB_n2", "JOB_never"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_NE(r.err.find("JOB_n2 is not in the dead set"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("JOB_never is not in the dead set"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).pending, 2);
}

TEST_F(DeadCli, DeleteByIdDeletesDeadRowsOnly) {
  kill_jobs({"JOB_x1", "JOB_x2"}, "e");
  ASSERT_EQ(enqueue(x(), keys(), "JOB_x3", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"dead", "delete", queue(), "JOB_x1", "JOB_x3"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_NE(r.err.find("JOB_x3 is not in the dead set"), std::string::npos) << r.err;
  EXPECT_FALSE(inspect(x(), keys(), "JOB_x1").has_value()) << "the row goes with the id";
  EXPECT_EQ(inspect(x(), keys(), "JOB_x3")->fields.at("state"), "pending") << "a pending job is not a dead one";
  EXPECT_EQ(stats(x(), keys()).dead, 1);

  r = emq({"dead", "delete", queue(), "JOB_x2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(stats(x(), keys()).dead, 0);
}

TEST_F(DeadCli, DeleteAllWantsYesWithoutATerminal) {
  kill_jobs({"JOB_y1", "JOB_y2"}, "e");
  EmqResult r = emq({"dead", "delete", queue(), "--all"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).dead, 2) << "refused means nothing deleted";

  r = emq({"dead", "delete", queue(), "--all", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  EXPECT_EQ(stats(x(), keys()).dead, 0);
  EXPECT_FALSE(inspect(x(), keys(), "JOB_y1").has_value());
}

TEST_F(DeadCli, ActsOnIdsOfAnyShapeAPeerWrote) {
  const std::string odd = "JOB odd:{id}";
  for (const std::string& id : {odd, odd + "2"}) {
    x().command({"HSET", keys().row_root + id, "state", "dead", "attempts", "3", "payload", "p"});
    x().command({"ZADD", keys().dead, "1", id});
  }
  EmqResult r = emq({"dead", "retry", queue(), odd});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = emq({"dead", "delete", queue(), odd + "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(x().command({"EXISTS", keys().row_root + odd + "2"}).integer, 0);
}

TEST_F(DeadCli, BadArgumentsAreUsage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"dead", "list", "bad queue"},
           {"dead", "list", queue(), "--limit", "0"},
           {"dead", "retry", queue(), "--limit", "-3"},
           {"dead", "retry"},
           {"dead", "retry", queue(), "JOB_a", "--limit", "2"},
           {"dead", "retry", queue(), "TASK_1"},
           {"dead", "delete", queue()},
           {"dead", "delete", queue(), "JOB_a", "--all"},
           {"dead", "delete", queue(), "task-1"},
           {"dead", "bury", queue()},
           {"dead"},
       }) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("emq: "), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace echomq::test
