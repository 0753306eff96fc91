// emq search (by text in a queue, by id across queues) and the bulk forms
// emq dead retry --match and emq cancel --match.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/jobs.h"
#include "echomq/stats.h"
#include "seed_jobs.h"

namespace echomq::test {
namespace {

using SearchCli = CliTest;

TEST_F(SearchCli, FindsPayloadWordsAndSaysWhatItScanned) {
  seed_pending(x(), keys(), numbered_ids(600, "p"), [](std::size_t i) { return i == 420 ? "{\"order\":4711}" : "{}"; });
  EmqResult r = emq({"search", queue(), "--payload", "4711"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(cells_of(lines[0])[0], "ID");
  EXPECT_EQ(cells_of(lines[1])[0], "JOB_p100420");
  EXPECT_NE(r.err.find("scanned 600 of 600 pending jobs of queue " + queue() + "; 1 found"), std::string::npos)
      << r.err;

  r = emq({"search", queue(), "--payload", "4711", "--scan", "400", "--json"});
  ASSERT_EQ(r.exit_code, 1) << "nothing found in the rows read: " << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["scanned"], 400);
  EXPECT_EQ(j["total"], 600);
  EXPECT_TRUE(j["jobs"].empty());

  r = emq({"search", queue(), "--id-prefix", "JOB_p1005", "--limit", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["limit_reached"], true);
  EXPECT_EQ(j["jobs"][0]["id"], "JOB_p100500");
}

TEST_F(SearchCli, FindsAnIdAcrossQueues) {
  seed_pending(x(), keys(), {"JOB_o4711"}, [](std::size_t) { return "x"; });
  register_queues(x(), {queue()});
  EmqResult r = emq({"search", "--id", "JOB_o4711"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{queue(), "JOB_o4711", "pending", "0", "-"}));
  r = emq({"search", "--id", "JOB_nowhere"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no job JOB_nowhere in any known queue"), std::string::npos) << r.err;
  r = emq({"search", "--id", "JOB_o4711", queue()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(SearchCli, RefusesBadStatesAndBounds) {
  EXPECT_EQ(emq({"search", queue(), "--state", "finished"}).exit_code, 2);
  EXPECT_EQ(emq({"search", queue(), "--scan", "0"}).exit_code, 2);
  EXPECT_EQ(emq({"search", queue(), "--limit", "-1"}).exit_code, 2);
  EXPECT_EQ(emq({"search"}).exit_code, 2);
}

TEST_F(SearchCli, BulkRetryOfAThousandMatchesLeavesTheOtherDeadJobsDead) {
  seed_dead(
      x(), keys(), numbered_ids(1300, "d"), [](std::size_t) { return "{}"; },
      [](std::size_t i) { return i % 13 < 10 ? "upstream timeout after 30s" : "bad input"; });
  ASSERT_EQ(count_jobs(x(), keys(), JobState::Dead), 1300);

  // Off a terminal, without --yes: refused, nothing moved.
  EmqResult r = emq({"dead", "retry", queue(), "--match", "timeout"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("found 1000 dead jobs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 1300);

  r = emq({"dead", "retry", queue(), "--match", "timeout", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1000\n");
  EXPECT_NE(r.err.find("retried 1000"), std::string::npos) << r.err;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 1000);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 300);
  ListArgs dead;
  dead.state = JobState::Dead;
  dead.limit = 1000;
  for (const JobSummary& j : list_jobs(x(), keys(), dead).jobs) EXPECT_EQ(j.error, "bad input") << j.id;

  EXPECT_EQ(emq({"dead", "retry", queue(), "JOB_d100000", "--match", "x"}).exit_code, 2);
}

TEST_F(SearchCli, BulkCancelTakesPendingOrDelayedMatchesOnly) {
  seed_pending(x(), keys(), numbered_ids(40, "c"), [](std::size_t i) { return i < 25 ? "report 2024" : "invoice"; });
  EmqResult r = emq({"cancel", queue(), "--match", "report", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "25\n");
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 15);
  EXPECT_EQ(emq({"cancel", queue(), "--match", "invoice", "--state", "dead", "--yes"}).exit_code, 2);
  EXPECT_EQ(emq({"cancel", queue()}).exit_code, 2) << "an id or --match";
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 15);
}

// A text in the payload of some jobs and in the error of others: the count
// is said per field before the question, and --in narrows where to look.
TEST_F(SearchCli, BulkCancelCountsPerFieldBeforeItAsksAndInNarrowsIt) {
  const std::int64_t later = x().server_time_ms() + 3600 * 1000;
  for (const std::string& id : numbered_ids(40, "l")) {
    ASSERT_EQ(enqueue(x(), keys(), id, "send later", {0, later}), EnqueueResult::Enqueued);
  }
  // Jobs that failed and wait for their retry, whose error says "later".
  seed_pending(x(), keys(), numbered_ids(21, "r"), [](std::size_t) { return "{}"; });
  for (const ClaimedJob& j : claim(x(), keys(), {30000, 21, 0})) {
    ASSERT_EQ(fail(x(), keys(), {j.id, j.lease_epoch}, {"upstream: try again later", 5, 3600000, false}),
              FailResult::Retry);
  }
  ASSERT_EQ(count_jobs(x(), keys(), JobState::Delayed), 61);

  // Off a terminal, without --yes: the count, per field, and nothing done.
  EmqResult r = emq({"cancel", queue(), "--match", "later", "--state", "delayed"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("found 61 delayed jobs of queue " + queue() +
                       " whose payload or error contains the text: 40 in the payload, 21 in the error"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Delayed), 61);

  r = emq({"cancel", queue(), "--match", "later", "--in", "payload", "--state", "delayed", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "40\n");
  EXPECT_NE(r.err.find("found 40 delayed jobs of queue " + queue() + " whose payload contains the text"),
            std::string::npos)
      << r.err;
  ListArgs delayed;
  delayed.state = JobState::Delayed;
  const JobPage left = list_jobs(x(), keys(), delayed);
  ASSERT_EQ(left.total, 21);
  for (const JobSummary& j : left.jobs) EXPECT_EQ(j.id.rfind("JOB_r", 0), 0u) << j.id << ": not a retrying job";

  r = emq({"cancel", queue(), "--match", "JOB_r10001", "--in", "id", "--state", "delayed", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "10\n") << "JOB_r100010 to JOB_r100019: " << r.err;
  EXPECT_NE(r.err.find("whose id starts with the text"), std::string::npos) << r.err;

  r = emq({"cancel", queue(), "--match", "later", "--in", "error", "--state", "delayed", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "11\n");
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Delayed), 0);

  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"cancel", queue(), "--match", "later", "--in", "result", "--yes"},
           {"dead", "retry", queue(), "--match", "later", "--in", "somewhere", "--yes"},
           {"cancel", queue(), "JOB_l100000", "--in", "error"},
           {"dead", "retry", queue(), "JOB_l100000", "--in", "error"}}) {
    r = emq(bad);
    EXPECT_EQ(r.exit_code, 2) << bad[4] << ": " << r.err;
    EXPECT_NE(r.err.find("--in"), std::string::npos) << r.err;
  }
}

// dead retry --match takes --in as cancel does.
TEST_F(SearchCli, BulkRetryLooksOnlyWhereInSays) {
  seed_dead(
      x(), keys(), numbered_ids(30, "d"), [](std::size_t i) { return i < 10 ? "timeout=30" : "{}"; },
      [](std::size_t i) { return i < 10 ? "bad input" : "upstream timeout"; });
  EmqResult r = emq({"dead", "retry", queue(), "--match", "timeout", "--in", "error", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "20\n");
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 10);
  r = emq({"dead", "retry", queue(), "--match", "timeout"});
  EXPECT_EQ(r.exit_code, 2) << "off a terminal without --yes: " << r.err;
  EXPECT_NE(r.err.find("found 10 dead jobs of queue " + queue() +
                       " whose payload or error contains the text: 10 in the payload, 0 in the error"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 10);
}

}  // namespace
}  // namespace echomq::test
