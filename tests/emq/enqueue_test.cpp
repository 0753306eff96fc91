// emq enqueue: ids, payloads (argument and stdin, binary-safe), lanes,
// delays by the server's clock, duplicates, and the arguments it refuses.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_fixture.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class EnqueueCli : public CliTest {
 protected:
  std::string row_field(const std::string& id, const std::string& name) {
    auto row = inspect(x(), keys(), id);
    if (!row) return "<no row>";
    auto it = row->fields.find(name);
    return it == row->fields.end() ? "<absent>" : it->second;
  }
  std::string score(const std::string& set, const std::string& id) { return x().command({"ZSCORE", set, id}).str; }
};

TEST_F(EnqueueCli, PrintsMintedIdAndWritesTheRow) {
  EmqResult r = emq({"enqueue", queue(), "hello"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(lines_of(r.out).size(), 1u) << r.out;
  const std::string id = lines_of(r.out)[0];
  EXPECT_TRUE(minted_at_ms(id).has_value()) << id << " is not JOB_ + a ULID";
  EXPECT_EQ(row_field(id, "state"), "pending");
  EXPECT_EQ(row_field(id, "attempts"), "0");
  EXPECT_EQ(row_field(id, "payload"), "hello");
  EXPECT_EQ(score(keys().pending, id), "0");
  // Registered, so that emq stats with no queue lists it.
  std::vector<std::string> known = known_queues(x());
  EXPECT_NE(std::find(known.begin(), known.end(), queue()), known.end());
}

TEST_F(EnqueueCli, GivenIdAndLane) {
  EmqResult r = emq({"enqueue", queue(), "low", "--id", "JOB_order-42", "--lane", "-7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_order-42\n");
  EXPECT_EQ(score(keys().pending, "JOB_order-42"), "-7");
  EXPECT_EQ(row_field("JOB_order-42", "lane"), "-7");

  r = emq({"enqueue", queue(), "high", "--id", "JOB_order-43", "--lane=1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(score(keys().pending, "JOB_order-43"), "1000");
}

TEST_F(EnqueueCli, DuplicateExitsZeroSaysSoAndChangesNothing) {
  ASSERT_EQ(emq({"enqueue", queue(), "first", "--id", "JOB_dup"}).exit_code, 0);
  EmqResult r = emq({"enqueue", queue(), "second", "--id", "JOB_dup"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "JOB_dup\n");
  EXPECT_EQ(r.err.rfind("emq: duplicate: JOB_dup already exists", 0), 0u) << r.err;
  EXPECT_EQ(row_field("JOB_dup", "payload"), "first");
}

// The job joins the caller's trace: --traceparent (and --tracestate), else
// TRACEPARENT and TRACESTATE from the environment, as a traced handler has
// them; the flag wins. A malformed flag is refused with nothing written; a
// malformed variable is said and left out, and the job is enqueued.
TEST_F(EnqueueCli, TheTraceContextComesFromTheFlagOrTheEnvironment) {
  const std::string flag_tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::string env_tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  EmqResult r = emq({"enqueue", queue(), "a", "--id", "JOB_flag", "--traceparent", flag_tp, "--tracestate", "v=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_flag", "traceparent"), flag_tp);
  EXPECT_EQ(row_field("JOB_flag", "tracestate"), "v=1");

  const Env env{{"EMQ_URL", server().url()}, {"TRACEPARENT", env_tp}, {"TRACESTATE", "e=2"}};
  r = run_emq({"enqueue", queue(), "b", "--id", "JOB_env"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_env", "traceparent"), env_tp);
  EXPECT_EQ(row_field("JOB_env", "tracestate"), "e=2");
  r = run_emq({"enqueue", queue(), "c", "--id", "JOB_both", "--traceparent", flag_tp}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_both", "traceparent"), flag_tp);
  EXPECT_EQ(row_field("JOB_both", "tracestate"), "<absent>") << "the environment's tracestate is not the flag's";
  r = run_emq({"enqueue", queue(), "--ndjson", "-"}, env, "{\"id\": \"JOB_line\", \"payload\": \"d\"}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_line", "traceparent"), env_tp);

  r = emq({"enqueue", queue(), "e", "--id", "JOB_bad", "--traceparent",
           "00-" + std::string(32, '0') + "-00f067aa0ba902b7-01"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--traceparent is not a W3C traceparent (the traceparent's trace id is all zeros"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(row_field("JOB_bad", "state"), "<no row>");
  r = emq({"enqueue", queue(), "f", "--tracestate", "v=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tracestate needs --traceparent"), std::string::npos) << r.err;

  r = run_emq({"enqueue", queue(), "g", "--id", "JOB_badenv"}, {{"EMQ_URL", server().url()}, {"TRACEPARENT", "junk"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("TRACEPARENT in the environment is not a W3C traceparent"), std::string::npos) << r.err;
  EXPECT_EQ(row_field("JOB_badenv", "payload"), "g");
  EXPECT_EQ(row_field("JOB_badenv", "traceparent"), "<absent>");
}

TEST_F(EnqueueCli, StdinPayloadIsBinarySafe) {
  // Every byte value, NULs and invalid UTF-8 included, and more than one
  // pipe buffer's worth, so a short read would show.
  std::string payload;
  for (int round = 0; round < 1200; ++round) {
    for (int b = 0; b < 256; ++b) payload += static_cast<char>(b);
  }
  EmqResult r = emq({"enqueue", queue(), "-", "--id", "JOB_dash"}, payload);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string stored = row_field("JOB_dash", "payload");
  EXPECT_EQ(stored.size(), payload.size());
  EXPECT_TRUE(stored == payload) << "the stored payload differs from the bytes sent on stdin";

  // No PAYLOAD argument reads stdin too.
  r = emq({"enqueue", queue(), "--id", "JOB_nopayload"}, std::string("a\0b\xff", 4));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_nopayload", "payload"), std::string("a\0b\xff", 4));

  // Empty stdin is an empty payload, not an error.
  r = emq({"enqueue", queue(), "--id", "JOB_empty"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_empty", "payload"), "");
}

TEST_F(EnqueueCli, DelayUsesTheServerClock) {
  const std::int64_t before = x().server_time_ms();
  EmqResult r = emq({"enqueue", queue(), "later", "--id", "JOB_later", "--delay-ms", "60000", "--lane", "3"});
  const std::int64_t after = x().server_time_ms();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_later", "state"), "delayed");
  EXPECT_EQ(row_field("JOB_later", "lane"), "3");
  EXPECT_TRUE(x().command({"ZSCORE", keys().pending, "JOB_later"}).is_nil());
  const std::int64_t due = std::stoll(score(keys().delayed, "JOB_later"));
  EXPECT_GE(due, before + 60000);
  EXPECT_LE(due, after + 60000);
}

TEST_F(EnqueueCli, AtTakesRfc3339OrEpochMilliseconds) {
  EmqResult r = emq({"enqueue", queue(), "x", "--id", "JOB_at1", "--at", "2031-05-06T07:08:09.250Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_field("JOB_at1", "state"), "delayed");
  EXPECT_EQ(score(keys().delayed, "JOB_at1"), "1935817689250");

  // The same instant written in another zone.
  r = emq({"enqueue", queue(), "x", "--id", "JOB_at2", "--at", "2031-05-06T09:38:09.25+02:30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(score(keys().delayed, "JOB_at2"), "1935817689250");

  r = emq({"enqueue", queue(), "x", "--id", "JOB_at3", "--at", "1935817689250", "--lane", "-2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(score(keys().delayed, "JOB_at3"), "1935817689250");
  EXPECT_EQ(row_field("JOB_at3", "lane"), "-2");

  // A time already past is due at once: the next claim takes it.
  r = emq({"enqueue", queue(), "x", "--id", "JOB_past", "--at", "2001-01-01T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 100});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "JOB_past");
}

TEST_F(EnqueueCli, RefusesBadArgumentsWithExit2BeforeTouchingTheServer) {
  const std::string dbsize = server().cli({"DBSIZE"});
  const std::vector<std::vector<std::string>> bad = {
      {"enqueue", "bad{queue}", "x"},
      {"enqueue", "has space", "x"},
      {"enqueue", std::string(65, 'q'), "x"},
      {"enqueue", queue(), "x", "--id", "order-1"},  // not JOB-namespaced
      {"enqueue", queue(), "x", "--id", "JOB_a/b"},  // a byte ids may not hold
      {"enqueue", queue(), "x", "--id", "JOB_"},     // empty after the brand
      {"enqueue", queue(), "x", "--lane", "1001"},
      {"enqueue", queue(), "x", "--lane", "-1001"},
      {"enqueue", queue(), "x", "--lane", "low"},
      {"enqueue", queue(), "x", "--delay-ms", "-1"},
      {"enqueue", queue(), "x", "--at", "tomorrow"},
      {"enqueue", queue(), "x", "--at", "2031-05-06T07:08:09"},   // no zone
      {"enqueue", queue(), "x", "--at", "2031-02-29T00:00:00Z"},  // no such day
      {"enqueue", queue(), "x", "--at", "2031-05-06T07:08:09Z", "--delay-ms", "5"},
      {"enqueue", queue(), "x", "--ndjson", "-"},
      {"enqueue", queue(), "x", "--no-such-flag"},
      {"enqueue"},
  };
  for (const auto& args : bad) {
    EmqResult r = emq(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(r.exit_code, 2) << shown;
    EXPECT_EQ(r.out, "") << shown;
    EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << shown << ": " << r.err;
  }
  EXPECT_EQ(server().cli({"DBSIZE"}), dbsize) << "a refused enqueue wrote to the server";
}

TEST_F(EnqueueCli, MessagesNameTheRule) {
  EmqResult r = emq({"enqueue", queue(), "x", "--lane", "5000"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-1000..1000"), std::string::npos) << r.err;
  r = emq({"enqueue", "a:b", "x"});
  EXPECT_NE(r.err.find("A-Z a-z 0-9 _ . -"), std::string::npos) << r.err;
  r = emq({"enqueue", queue(), "x", "--id", "order-1"});
  EXPECT_NE(r.err.find("JOB_"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace echomq::test
