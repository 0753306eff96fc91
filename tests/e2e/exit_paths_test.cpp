// Each way an exec handler can end, as the job's row shows it afterwards.
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

class ExitPaths : public E2E {};

TEST_F(ExitPaths, ZeroCompletesWithTheResultKept) {
  EmqdProcess d(config_head(server) +
                "  - name: paths\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"printf 'got:'; cat\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("paths", "hello");
  ASSERT_TRUE(settled("paths", 1)) << d.log();
  auto r = row("paths", id);
  EXPECT_EQ(r["state"], "completed");
  EXPECT_EQ(r["result"], "got:hello");
  EXPECT_EQ(r["attempts"], "1");
}

TEST_F(ExitPaths, PermanentExitCodeGoesDeadAtOnce) {
  EmqdProcess d(config_head(server) +
                "  - name: paths\n    max_attempts: 5\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo bad data >&2; exit 65\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("paths", "x");
  ASSERT_TRUE(settled("paths", 1)) << d.log();
  auto r = row("paths", id);
  EXPECT_EQ(r["state"], "dead");
  EXPECT_EQ(r["attempts"], "1");
  EXPECT_NE(r["error"].find("bad data"), std::string::npos) << r["error"];
}

TEST_F(ExitPaths, OtherExitRetriesWithBackoffUntilMaxAttempts) {
  EmqdProcess d(config_head(server) +
                "  - name: paths\n    max_attempts: 3\n"
                "    backoff: { initial_ms: 50, multiplier: 2.0, max_ms: 1000, jitter: 0 }\n"
                "    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo attempt $EMQ_ATTEMPT >&2; exit 3\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("paths", "x");
  ASSERT_TRUE(settled("paths", 1)) << d.log();
  auto r = row("paths", id);
  EXPECT_EQ(r["state"], "dead");
  EXPECT_EQ(r["attempts"], "3");
  EXPECT_EQ(r["failures"], "3");
  EXPECT_NE(r["error"].find("exit code 3"), std::string::npos) << r["error"];
  EXPECT_NE(r["error"].find("attempt 3"), std::string::npos) << r["error"];
  QueueStats s = stats_of("paths");
  EXPECT_EQ(s.counters["retried"], 2);
  EXPECT_EQ(s.counters["dead"], 1);
}

TEST_F(ExitPaths, RetryThenSuccess) {
  EmqdProcess d(config_head(server) +
                "  - name: paths\n    max_attempts: 3\n"
                "    backoff: { initial_ms: 20, multiplier: 1.0, max_ms: 20, jitter: 0 }\n"
                "    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"[ $EMQ_ATTEMPT -ge 2 ]\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("paths", "x");
  ASSERT_TRUE(settled("paths", 1)) << d.log();
  EXPECT_TRUE(row("paths", id).empty()) << "keep_completed_s 0 deletes the row";
  QueueStats s = stats_of("paths");
  EXPECT_EQ(s.counters["completed"], 1);
  EXPECT_EQ(s.counters["retried"], 1);
}

TEST_F(ExitPaths, DeathBySignalRetries) {
  EmqdProcess d(config_head(server) +
                "  - name: paths\n    max_attempts: 1\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"kill -KILL $$\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("paths", "x");
  ASSERT_TRUE(settled("paths", 1)) << d.log();
  auto r = row("paths", id);
  EXPECT_EQ(r["state"], "dead");
  EXPECT_NE(r["error"].find("SIGKILL"), std::string::npos) << r["error"];
}

TEST_F(ExitPaths, TenMebibytesRoundTripAndAHandlerThatNeverReads) {
  EmqdProcess d(config_head(server) +
                "  - name: echo\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                "      command: [\"/bin/cat\"]\n      max_output_bytes: 20000000\n"
                "  - name: deaf\n    handler:\n      type: exec\n      command: [\"/bin/true\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string big(10 * 1024 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) % 256);
  std::string echo_id = put("echo", big);
  std::string deaf_id = put("deaf", big);
  ASSERT_TRUE(settled("deaf", 1)) << d.log();
  ASSERT_TRUE(settled("echo", 1)) << d.log();
  auto r = row("echo", echo_id);
  EXPECT_EQ(r["state"], "completed");
  EXPECT_TRUE(r["result"] == big) << "result of " << r["result"].size() << " bytes differs";
  EXPECT_EQ(completed("deaf"), 1);
}

TEST_F(ExitPaths, TimeoutKillsTheProcessGroupEvenWhenItIgnoresTerm) {
  const std::string pidfile = server.dir() + "/pgid";
  EmqdProcess d(config_head(server) +
                "  - name: slow\n    max_attempts: 1\n    handler:\n      type: exec\n"
                "      timeout_s: 1\n      kill_grace_s: 1\n"
                "      command: [\"/bin/sh\", \"-c\", \"trap '' TERM; echo $$ > " +
                pidfile + "; sh -c \\\"trap '' TERM; sleep 60\\\" & sleep 60\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const auto began = std::chrono::steady_clock::now();
  std::string id = put("slow", "x");
  ASSERT_TRUE(settled("slow", 1, seconds(15))) << d.log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_LT(took, 8.0) << "timeout 1 s + grace 1 s should end the job well within 8 s";
  auto r = row("slow", id);
  EXPECT_EQ(r["state"], "dead");
  EXPECT_NE(r["error"].find("timed out"), std::string::npos) << r["error"];
  std::ifstream in(pidfile);
  pid_t pgid = 0;
  in >> pgid;
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(wait_for([&] { return ::kill(-pgid, 0) != 0 && errno == ESRCH; }, seconds(3)))
      << "processes of the handler's group survived";
}

}  // namespace
}  // namespace echomq::test
