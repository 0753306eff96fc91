// emq inspect: the row in text and JSON, text versus base64 payloads,
// truncation in text mode, a traced job's trace id and link, not found
// and bad ids.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class InspectCli : public CliTest {
 protected:
  // A job claimed once and failed for retry: every field has a value.
  void seed_retried(const std::string& id, const std::string& payload) {
    EnqueueOptions o;
    o.lane = 5;
    ASSERT_EQ(enqueue(x(), keys(), id, payload, o), EnqueueResult::Enqueued);
    std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    FailArgs retry;
    retry.error = "boom: exit 1";
    ASSERT_EQ(fail(x(), keys(), {id, jobs[0].lease_epoch}, retry), FailResult::Retry);
  }
};

TEST_F(InspectCli, TextShowsEveryField) {
  seed_retried("JOB_t1", "hello\nworld");
  EmqResult r = emq({"inspect", queue(), "JOB_t1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> want = {
      "queue        " + queue(),
      "id           JOB_t1",
      "state        pending",
      "attempts     1",
      "lease_epoch  1",
      "failures     1",
      "lane         5",
      "error        12 bytes, text",
      "  boom: exit 1",
      "payload      11 bytes, text",
      "  hello",
      "  world",
      "result       (none)",
  };
  EXPECT_EQ(lines_of(r.out), want) << r.out;
}

TEST_F(InspectCli, JsonShowsEveryField) {
  seed_retried("JOB_j1", "{\"to\":\"a@example.com\"}");
  EmqResult r = emq({"inspect", queue(), "JOB_j1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  nlohmann::json want = {{"queue", queue()},
                         {"id", "JOB_j1"},
                         {"state", "pending"},
                         {"attempts", 1},
                         {"lease_epoch", 1},
                         {"failures", 1},
                         {"lane", 5},
                         {"trace_id", nullptr},
                         {"error", "boom: exit 1"},
                         {"payload", "{\"to\":\"a@example.com\"}"},
                         {"result", nullptr},
                         {"progress", nullptr},
                         {"payload_bytes", 22}};
  EXPECT_EQ(j, want) << j.dump(2);
}

TEST_F(InspectCli, MintedIdShowsWhenItWasMinted) {
  EmqResult e = emq({"enqueue", queue(), "x"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const std::string id = lines_of(e.out)[0];
  const std::int64_t now = x().server_time_ms();
  EmqResult r = emq({"inspect", queue(), id, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  // Minted by emq's clock, on this same machine as the server.
  EXPECT_NEAR(j["minted_ms"].get<double>(), static_cast<double>(now), 60000.0);
}

TEST_F(InspectCli, BinaryPayloadIsBase64) {
  const std::string payload("\x00\xff\x10\x80", 4);  // base64 AP8QgA==
  ASSERT_EQ(enqueue(x(), keys(), "JOB_bin", payload), EnqueueResult::Enqueued);

  EmqResult r = emq({"inspect", queue(), "JOB_bin", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["payload_b64"], "AP8QgA==");
  EXPECT_FALSE(j.contains("payload"));
  EXPECT_EQ(j["payload_bytes"], 4);

  r = emq({"inspect", queue(), "JOB_bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("payload      4 bytes, not text: shown as base64\n  AP8QgA==\n"), std::string::npos) << r.out;
}

TEST_F(InspectCli, LargePayloadIsCutInTextAndWholeInJson) {
  std::string payload(5000, 'x');
  ASSERT_EQ(enqueue(x(), keys(), "JOB_big", payload), EnqueueResult::Enqueued);

  EmqResult r = emq({"inspect", queue(), "JOB_big"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("payload      5000 bytes, text; truncated to the first 1024 bytes (--json shows all)\n  " +
                       std::string(1024, 'x') + "\n"),
            std::string::npos)
      << r.out.substr(0, 400);

  r = emq({"inspect", queue(), "JOB_big", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["payload"], payload);
}

TEST_F(InspectCli, TextIsNeverCutInsideACharacter) {
  // 1023 ASCII bytes then a 3-byte character straddling the 1024-byte cut.
  std::string payload = std::string(1023, 'a') + "\xe2\x82\xac" + "tail";
  ASSERT_EQ(enqueue(x(), keys(), "JOB_utf8", payload), EnqueueResult::Enqueued);
  EmqResult r = emq({"inspect", queue(), "JOB_utf8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("truncated to the first 1023 bytes"), std::string::npos) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("  " + std::string(1023, 'a') + "\n"), std::string::npos);
}

TEST_F(InspectCli, DelayedJobShowsItsDueTime) {
  EmqResult e = emq({"enqueue", queue(), "x", "--id", "JOB_due", "--delay-ms", "90000"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const std::int64_t due = std::stoll(x().command({"ZSCORE", keys().delayed, "JOB_due"}).str);
  EmqResult r = emq({"inspect", queue(), "JOB_due", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["state"], "delayed");
  EXPECT_EQ(j["due_ms"], due);
}

TEST_F(InspectCli, ActiveAndDeadJobsShowTheirTimes) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_act", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_gone", "p"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 2, 0});
  ASSERT_EQ(jobs.size(), 2u);
  FailArgs permanent;
  permanent.permanent = true;
  ASSERT_EQ(fail(x(), keys(), {"JOB_gone", jobs[1].lease_epoch}, permanent), FailResult::Dead);

  EmqResult r = emq({"inspect", queue(), "JOB_act", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["state"], "active");
  EXPECT_EQ(j["lease_deadline_ms"], std::stoll(x().command({"ZSCORE", keys().active, "JOB_act"}).str));

  r = emq({"inspect", queue(), "JOB_gone", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["state"], "dead");
  EXPECT_EQ(j["died_ms"], std::stoll(x().command({"ZSCORE", keys().dead, "JOB_gone"}).str));

  r = emq({"inspect", queue(), "JOB_gone"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ndied         20"), std::string::npos) << r.out;
}

TEST_F(InspectCli, CompletedKeptRowShowsItsResult) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_done", "in"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(complete(x(), keys(), {"JOB_done", jobs[0].lease_epoch}, 60000, "thumbnail ok"), CompleteResult::Completed);
  EmqResult r = emq({"inspect", queue(), "JOB_done", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["result"], "thumbnail ok");
}

TEST_F(InspectCli, NotFoundIsExit1) {
  EmqResult r = emq({"inspect", queue(), "JOB_missing"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("emq: no job JOB_missing in queue " + queue(), 0), 0u) << r.err;
  EXPECT_EQ(emq({"inspect", queue(), "JOB_missing", "--json"}).exit_code, 1);
}

TEST_F(InspectCli, BadIdOrQueueIsExit2) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"inspect", queue(), "missing"},
           {"inspect", "q:1", "JOB_x"},
           {"inspect", queue()},
       }) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
  }
  // Past the wire's gate, any id is looked up (a peer may have written it):
  // not found is exit 1, not a usage error.
  EXPECT_EQ(emq({"inspect", queue(), "JOB_a b"}).exit_code, 1);
}

// Issue 52: a row with a producer's trace context shows its trace id, and
// with --trace-url where to see it; a field that is not W3C is said so.
TEST_F(InspectCli, ATracedJobShowsItsTraceIdAndItsLink) {
  const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  ASSERT_EQ(enqueue(x(), keys(), "JOB_tr", "p"), EnqueueResult::Enqueued);
  ASSERT_FALSE(
      x().command({"HSET", keys().row("JOB_tr"), "traceparent", "00-" + trace_id + "-00f067aa0ba902b7-01"}).is_error());

  EmqResult r = emq({"inspect", queue(), "JOB_tr"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  auto lane = std::find(lines.begin(), lines.end(), "lane         0");
  ASSERT_NE(lane, lines.end()) << r.out;
  ASSERT_NE(lane + 1, lines.end()) << r.out;
  EXPECT_EQ(*(lane + 1), "trace        " + trace_id) << r.out;
  EXPECT_EQ(r.out.find("trace url"), std::string::npos) << "no link without a template: " << r.out;

  const std::string tmpl = "https://tracing.example/trace/{trace_id}?orgId=1";
  const std::string url = "https://tracing.example/trace/" + trace_id + "?orgId=1";
  r = emq({"inspect", queue(), "JOB_tr", "--trace-url", tmpl});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = lines_of(r.out);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "trace url    " + url), lines.end()) << r.out;

  r = emq({"inspect", queue(), "JOB_tr", "--json", "--trace-url", tmpl});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trace_id"], trace_id) << j.dump(2);
  EXPECT_EQ(j["trace_url"], url) << j.dump(2);
}

TEST_F(InspectCli, ATraceparentThatIsNotW3CIsSaidToBeNoTrace) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_odd", "p"), EnqueueResult::Enqueued);
  ASSERT_FALSE(x().command({"HSET", keys().row("JOB_odd"), "traceparent", "00-abc"}).is_error());
  EmqResult r = emq({"inspect", queue(), "JOB_odd", "--trace-url", "https://tracing.example/{trace_id}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trace        none: the row's traceparent is not W3C (expected a W3C traceparent"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("trace url"), std::string::npos) << r.out;
  r = emq({"inspect", queue(), "JOB_odd", "--json", "--trace-url", "https://tracing.example/{trace_id}"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["trace_id"].is_null()) << j.dump(2);
  EXPECT_TRUE(j["trace_url"].is_null()) << j.dump(2);
  EXPECT_NE(j["traceparent_problem"].get<std::string>().find("6 bytes"), std::string::npos) << j.dump(2);
}

TEST_F(InspectCli, ATraceUrlThatIsNoHttpLinkWithATraceIdIsExit2) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_t", "p"), EnqueueResult::Enqueued);
  for (const std::string bad :
       {"ftp://tracing.example/{trace_id}", "https://tracing.example/trace", "https://tracing.example/ {trace_id}"}) {
    EmqResult r = emq({"inspect", queue(), "JOB_t", "--trace-url", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(r.err.rfind("emq: --trace-url: ", 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace echomq::test
