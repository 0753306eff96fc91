// emq jobs: one state of a queue, a page at a time, in the order each
// state is read in; what it shows of a row; the arguments it refuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "wait_for.h"
#include "echomq/flows.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class JobsCli : public CliTest {
 protected:
  nlohmann::json jobs_json(std::vector<std::string> args) {
    args.insert(args.begin(), {"jobs", queue()});
    args.push_back("--json");
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  std::vector<std::string> ids_of(const nlohmann::json& page) {
    std::vector<std::string> ids;
    for (const auto& j : page["jobs"]) ids.push_back(j["id"]);
    return ids;
  }
  // Claims and fails one job for good; it dies now, by the server's clock.
  void kill(const std::string& id, const std::string& error) {
    ASSERT_EQ(enqueue(x(), keys(), id, "p"), EnqueueResult::Enqueued);
    std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_EQ(fail(x(), keys(), {id, jobs[0].lease_epoch}, {error, 5, 0, true}), FailResult::Dead);
  }
};

TEST_F(JobsCli, PendingIsListedInClaimOrderLaneThenId) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_b", "{\"n\":2}"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_a", "{\"n\":1}"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_z", "urgent", {-5, std::nullopt}), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_y", "late", {7, std::nullopt}), EnqueueResult::Enqueued);

  nlohmann::json page = jobs_json({});
  EXPECT_EQ(page["state"], "pending");
  EXPECT_EQ(page["total"], 4);
  EXPECT_EQ(page["offset"], 0);
  EXPECT_EQ(ids_of(page), (std::vector<std::string>{"JOB_z", "JOB_a", "JOB_b", "JOB_y"}));
  EXPECT_EQ(page["jobs"][0]["lane"], -5);
  EXPECT_EQ(page["jobs"][0]["payload_preview"], "urgent");
  EXPECT_EQ(page["jobs"][0]["payload_bytes"], 6);
  EXPECT_EQ(page["jobs"][0]["attempts"], 0);
  EXPECT_EQ(page["jobs"][0]["state"], "pending");

  // The next claim takes the head of the listing.
  std::vector<ClaimedJob> next = claim(x(), keys(), {30000, 1, 0});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, "JOB_z");

  EmqResult r = emq({"jobs", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"ID", "LANE", "ATTEMPTS", "FAILURES", "PAYLOAD", "ERROR"}));
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"JOB_a", "0", "0", "0", "{\"n\":1}", "-"}));
}

TEST_F(JobsCli, PagesByOffsetAndSaysWhereItIs) {
  for (int i = 0; i < 25; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "JOB_%02d", i);
    ASSERT_EQ(enqueue(x(), keys(), id, "p"), EnqueueResult::Enqueued);
  }
  EmqResult r = emq({"jobs", queue(), "--limit", "10", "--offset", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 11u) << r.out;
  EXPECT_EQ(cells_of(lines[1])[0], "JOB_10");
  EXPECT_EQ(cells_of(lines[10])[0], "JOB_19");
  EXPECT_EQ(r.err, "emq: showing 11-20 of 25 pending jobs; --offset 20 shows the next\n");

  nlohmann::json last = jobs_json({"--limit", "10", "--offset", "20"});
  EXPECT_EQ(ids_of(last), (std::vector<std::string>{"JOB_20", "JOB_21", "JOB_22", "JOB_23", "JOB_24"}));
  EXPECT_TRUE(jobs_json({"--offset", "25"})["jobs"].empty());
}

TEST_F(JobsCli, DeadIsNewestDeathFirstWithTimeAndError) {
  kill("JOB_old", "first\nsecond line");
  kill("JOB_new", "boom");
  // Date the deaths apart, so the order is the dead set's, not the ids'.
  x().command({"ZADD", keys().dead, "XX", "1000", "JOB_old"});
  x().command({"ZADD", keys().dead, "XX", "2000", "JOB_new"});

  nlohmann::json page = jobs_json({"--state", "dead"});
  EXPECT_EQ(page["order"], "descending");
  EXPECT_EQ(ids_of(page), (std::vector<std::string>{"JOB_new", "JOB_old"}));
  EXPECT_EQ(page["jobs"][0]["died_ms"], 2000);
  EXPECT_EQ(page["jobs"][1]["error"], "first\nsecond line");
  EXPECT_EQ(page["jobs"][1]["attempts"], 1);
  EXPECT_EQ(page["jobs"][1]["failures"], 1);
  EXPECT_EQ(ids_of(jobs_json({"--state", "dead", "--reverse"})), (std::vector<std::string>{"JOB_old", "JOB_new"}));

  EmqResult r = emq({"jobs", queue(), "--state", "dead"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(cells_of(lines[0])[1], "DIED");
  EXPECT_EQ(cells_of(lines[2])[1], "1970-01-01T00:00:01.000Z");
  EXPECT_NE(lines[2].find("first ..."), std::string::npos) << lines[2];
}

TEST_F(JobsCli, DelayedIsSoonestDueFirstAndActiveShowsTheDeadline) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_later", "p", {0, 9000000000000}), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_sooner", "p", {3, 8000000000000}), EnqueueResult::Enqueued);
  nlohmann::json delayed = jobs_json({"--state", "delayed"});
  EXPECT_EQ(ids_of(delayed), (std::vector<std::string>{"JOB_sooner", "JOB_later"}));
  EXPECT_EQ(delayed["jobs"][0]["due_ms"], 8000000000000);
  EXPECT_EQ(delayed["jobs"][0]["lane"], 3);

  ASSERT_EQ(enqueue(x(), keys(), "JOB_run", "p"), EnqueueResult::Enqueued);
  const std::int64_t before = x().server_time_ms();
  ASSERT_EQ(claim(x(), keys(), {60000, 1, 0}).size(), 1u);
  nlohmann::json active = jobs_json({"--state", "active"});
  ASSERT_EQ(ids_of(active), (std::vector<std::string>{"JOB_run"}));
  EXPECT_GE(active["jobs"][0]["lease_deadline_ms"].get<std::int64_t>(), before + 60000);
  EXPECT_EQ(active["jobs"][0]["attempts"], 1);
  EXPECT_EQ(active["jobs"][0]["state"], "active");
}

TEST_F(JobsCli, PayloadPreviewIsCutAndBinaryIsBase64InJson) {
  const std::string binary("\xff\x00\x01", 3);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_1bin", binary), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_2long", std::string(500, 'a')), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_3huge", std::string(100 * 1024, 'h')), EnqueueResult::Enqueued);
  nlohmann::json page = jobs_json({});
  EXPECT_EQ(page["jobs"][0]["payload_preview_b64"], "/wAB");
  EXPECT_EQ(page["jobs"][1]["payload_preview"], std::string(200, 'a'));
  EXPECT_EQ(page["jobs"][1]["payload_bytes"], 500);
  EXPECT_TRUE(page["jobs"][2]["payload_preview"].is_null()) << "a payload over 64 KiB is not read for a preview";
  EXPECT_EQ(page["jobs"][2]["payload_bytes"], 100 * 1024);

  EmqResult r = emq({"jobs", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(not text, 3 bytes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string(40, 'a') + " ..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(102400 bytes)"), std::string::npos) << r.out;
}

TEST_F(JobsCli, ShowsIdsOfAnyShapeAPeerWrote) {
  // The host-side id rule would refuse this one; listed from the server it
  // is shown as it is, and a row that is gone shows as gone.
  const std::string odd = "JOB odd/id{x}";
  x().command({"HSET", keys().row_root + odd, "state", "dead", "attempts", "2", "payload", "p"});
  x().command({"ZADD", keys().dead, "5", odd});
  x().command({"ZADD", keys().dead, "4", "JOB_rowless"});
  nlohmann::json page = jobs_json({"--state", "dead"});
  ASSERT_EQ(ids_of(page), (std::vector<std::string>{odd, "JOB_rowless"}));
  EXPECT_EQ(page["jobs"][0]["attempts"], 2);
  EXPECT_TRUE(page["jobs"][1]["state"].is_null());
  EmqResult r = emq({"jobs", queue(), "--state", "dead"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(gone)"), std::string::npos) << r.out;
}

TEST_F(JobsCli, WaitingListsTheParentsOfFlowsLongestWaitingFirst) {
  for (const char* id : {"JOB_p2", "JOB_p1"}) {
    FlowNode parent;
    parent.queue = queue();
    parent.payload = std::string("report ") + id;
    parent.id = id;
    parent.children.push_back({"jobs-kids", "c", 0, "fail", std::string("JOB_c_") + id, {}});
    enqueue_flow(x(), parent);
    // The second waits from a later millisecond: in the same one, the
    // order would be the ids'.
    const std::int64_t since = std::stoll(x().command({"ZSCORE", QueueKeys(queue()).waiting, id}).str);
    ASSERT_TRUE(test::wait_for([&] { return x().server_time_ms() > since; }, std::chrono::seconds(5)));
  }
  nlohmann::json page = jobs_json({"--state", "waiting"});
  EXPECT_EQ(page["state"], "waiting");
  EXPECT_EQ(page["total"], 2);
  EXPECT_EQ(ids_of(page), (std::vector<std::string>{"JOB_p2", "JOB_p1"}));
  EXPECT_EQ(page["jobs"][0]["state"], "waiting");
  EXPECT_EQ(page["jobs"][0]["payload_preview"], "report JOB_p2");
  EXPECT_GT(page["jobs"][0]["waiting_since_ms"].get<std::int64_t>(), 0);

  EmqResult r = emq({"jobs", queue(), "--state", "waiting"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(cells_of(lines[0])[1], "SINCE") << r.out;
  EXPECT_EQ(cells_of(lines[1])[0], "JOB_p2") << r.out;
}

TEST_F(JobsCli, EmptySetSaysSo) {
  EmqResult r = emq({"jobs", queue(), "--state", "delayed"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "emq: no delayed jobs in queue " + queue() + "\n");
  nlohmann::json page = jobs_json({"--state", "delayed"});
  EXPECT_EQ(page["total"], 0);
  EXPECT_TRUE(page["jobs"].empty());
}

TEST_F(JobsCli, BadArgumentsAreUsage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"jobs", queue(), "--state", "completed"},
           {"jobs", queue(), "--limit", "0"},
           {"jobs", queue(), "--limit", "10001"},
           {"jobs", queue(), "--offset", "-1"},
           {"jobs", "bad queue"},
           {"jobs"},
       }) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace echomq::test
