// Sets of the size a real incident leaves: a million dead jobs listed a page
// at a time from either end, then purged through cancel; and a 100,000-line
// NDJSON enqueue. Times are printed (as [figure] lines) for the record, not
// asserted: speed is measured in bench/. What is asserted is what a user
// checks: the right page comes back, every row goes with its id, every line
// becomes one job.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/stats.h"
#include "web/emq_web_process.h"
#include "http_client.h"

namespace echomq::test {
namespace {

constexpr int kDeadJobs = 1000000;
constexpr int kSeedBatch = 10000;
constexpr int kNdjsonLines = 100000;

// Seeds dead jobs JOB_00000000.. with death times 1e6 + i, chunk by chunk in
// one script call each: a million emq or EVALSHA calls would take minutes.
constexpr const char* kSeedDead = R"lua(
local dead, root = KEYS[1], KEYS[2]
local from, n = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = from, from + n - 1 do
  local id = string.format('JOB_%08d', i)
  redis.call('HSET', root .. id, 'state', 'dead', 'attempts', '5', 'payload', 'p', 'failures', '5', 'error', 'boom')
  redis.call('ZADD', dead, 1000000 + i, id)
end
return n
)lua";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void figure(const std::string& what, double seconds) {
  std::printf("[figure] %s: %.3f s\n", what.c_str(), seconds);
  ::testing::Test::RecordProperty(what, std::to_string(seconds));
}

class LargeSetsCli : public CliTest {
 protected:
  EmqResult emq_long(const std::vector<std::string>& args, const std::string& input = {}) {
    return run_emq(args, {{"EMQ_URL", server().url()}}, input, std::chrono::minutes(5));
  }
};

TEST_F(LargeSetsCli, AMillionDeadListedAndPurged) {
  auto t0 = std::chrono::steady_clock::now();
  // The seed is set-up, not what is tested: its calls get a minute each. A
  // call of 10,000 rows outlived the default five seconds when the suite's
  // heaviest tests started beside it (-j3, 2 cores shared).
  ConnectionOptions seeding = server().options();
  seeding.command_timeout = std::chrono::minutes(1);
  Executor seeder(seeding);
  for (int from = 0; from < kDeadJobs; from += kSeedBatch) {
    Reply r = seeder.command(
        {"EVAL", kSeedDead, "2", keys().dead, keys().row_root, std::to_string(from), std::to_string(kSeedBatch)});
    ASSERT_FALSE(r.is_error()) << r.str;
  }
  ASSERT_EQ(x().command({"ZCARD", keys().dead}).integer, kDeadJobs);
  figure("seed 1000000 dead jobs", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  EmqResult r = emq_long({"jobs", queue(), "--state", "dead", "--limit", "50", "--json"});
  figure("emq jobs --state dead, first page of 50 (newest deaths)", seconds_since(t0));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json page = nlohmann::json::parse(r.out);
  EXPECT_EQ(page["total"], kDeadJobs);
  ASSERT_EQ(page["jobs"].size(), 50u);
  EXPECT_EQ(page["jobs"][0]["id"], "JOB_00999999");
  EXPECT_EQ(page["jobs"][0]["error"], "boom");
  EXPECT_EQ(page["jobs"][49]["id"], "JOB_00999950");

  t0 = std::chrono::steady_clock::now();
  r = emq_long({"jobs", queue(), "--state", "dead", "--limit", "50", "--offset", "999990", "--json"});
  figure("emq jobs --state dead, page at offset 999990", seconds_since(t0));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  page = nlohmann::json::parse(r.out);
  ASSERT_EQ(page["jobs"].size(), 10u);
  EXPECT_EQ(page["jobs"][9]["id"], "JOB_00000000");

  t0 = std::chrono::steady_clock::now();
  r = emq_long({"dead", "list", queue(), "--limit", "20"});
  figure("emq dead list --limit 20", seconds_since(t0));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 21u);

  // emq web pages the same set by index: the first and the last page of
  // the million answer like a page of a ten-job set.
  {
    EmqWeb web({"--listen", "127.0.0.1:0"}, {{"EMQ_URL", server().url()}});
    ASSERT_GT(web.port(), 0) << web.output();
    QueueKeys small(queue() + ".small");
    for (int i = 0; i < 10; ++i) {
      Reply seeded = x().command({"EVAL", kSeedDead, "2", small.dead, small.row_root, std::to_string(i), "1"});
      ASSERT_FALSE(seeded.is_error()) << seeded.str;
    }
    const std::string path = "/api/queues/" + queue() + "?state=dead";
    t0 = std::chrono::steady_clock::now();
    HttpAnswer a = http_get(web.port(), "/api/queues/" + small.queue + "?state=dead");
    figure("emq web GET /api/queues/Q?state=dead of 10 dead", seconds_since(t0));
    ASSERT_EQ(a.status, 200) << a.body;
    t0 = std::chrono::steady_clock::now();
    a = http_get(web.port(), path);
    figure("emq web GET /api/queues/Q?state=dead, page 1 of 1000000 dead", seconds_since(t0));
    ASSERT_EQ(a.status, 200) << a.body;
    nlohmann::json b = nlohmann::json::parse(a.body);
    EXPECT_EQ(b["total"], kDeadJobs);
    EXPECT_EQ(b["pages"], kDeadJobs / 50);
    EXPECT_EQ(b["jobs"][0]["id"], "JOB_00999999");
    EXPECT_EQ(b["jobs"][0]["error"]["text"], "boom");
    t0 = std::chrono::steady_clock::now();
    a = http_get(web.port(), path + "&page=20000");
    figure("emq web GET /api/queues/Q?state=dead&page=20000 (the last) of 1000000 dead", seconds_since(t0));
    b = nlohmann::json::parse(a.body);
    ASSERT_EQ(b["jobs"].size(), 50u);
    EXPECT_EQ(b["jobs"][49]["id"], "JOB_00000000");
    Reply gone = x().command({"DEL", small.dead});
    for (int i = 0; i < 10; ++i) {
      char id[16];
      std::snprintf(id, sizeof id, "JOB_%08d", i);
      gone = x().command({"DEL", small.row_root + id});
    }
  }

  t0 = std::chrono::steady_clock::now();
  r = emq_long({"purge", queue(), "--state", "dead", "--yes"});
  const double purge_s = seconds_since(t0);
  figure("emq purge --state dead of 1000000", purge_s);
  std::printf("[figure] purge rate: %.0f jobs/s\n", kDeadJobs / purge_s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::to_string(kDeadJobs) + "\n");
  EXPECT_EQ(x().command({"EXISTS", keys().dead}).integer, 0);
  EXPECT_EQ(x().command({"DBSIZE"}).integer, 1) << "only {emq}:version is left: every row went with its id";
}

TEST_F(LargeSetsCli, AHundredThousandLineNdjsonEnqueue) {
  std::string input;
  input.reserve(kNdjsonLines * 40);
  for (int i = 0; i < kNdjsonLines; ++i) input += "{\"payload\": {\"n\": " + std::to_string(i) + "}}\n";
  auto t0 = std::chrono::steady_clock::now();
  EmqResult r = emq_long({"enqueue", queue(), "--ndjson", "-"}, input);
  const double s = seconds_since(t0);
  figure("emq enqueue --ndjson of 100000 lines, whole command", s);
  std::printf("[figure] ndjson whole-command rate: %.0f jobs/s; emq says: %s", kNdjsonLines / s, r.err.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), static_cast<std::size_t>(kNdjsonLines));
  EXPECT_NE(r.err.find("enqueued 100000 jobs (0 duplicates)"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).pending, kNdjsonLines);
  // Line order is claim order: the ids were minted in line order.
  Reply head = x().command({"ZRANGE", keys().pending, "0", "0"});
  ASSERT_EQ(head.elements.size(), 1u);
  EXPECT_EQ(head.elements[0].str, lines_of(r.out).front());
  EXPECT_EQ(x().command({"HGET", keys().row_root + lines_of(r.out).back(), "payload"}).str,
            "{\"n\":" + std::to_string(kNdjsonLines - 1) + "}");
}

}  // namespace
}  // namespace echomq::test
