// Each signal means one thing in every phase of emqd's life, as
// docs/operations.md's table says: SIGTERM and SIGINT stop it cleanly;
// SIGHUP, SIGUSR1 and SIGUSR2 are logged and ignored. The phases are the
// start-up wait for a server that does not answer yet, and the drain.
#include <filesystem>

#include "e2e_fixture.h"

namespace echomq::test {
namespace {

class Signals : public E2E {
 protected:
  std::string cat_queue() {
    return config_head(server) +
           "  - name: q\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
           "      command: [\"/bin/cat\"]\n";
  }
};

// The server is down when emqd starts: it waits, saying so, until it answers.
TEST_F(Signals, IgnoredSignalsDuringTheStartupWaitLeaveItWaiting) {
  server.stop();
  EmqdProcess d(cat_queue());
  ASSERT_TRUE(d.wait_log("waiting for the server", seconds(20))) << d.log();
  for (const auto& [sig, name] : {std::pair{SIGHUP, "received SIGHUP"}, std::pair{SIGUSR1, "received SIGUSR1"},
                                  std::pair{SIGUSR2, "received SIGUSR2"}}) {
    d.signal(sig);
    ASSERT_TRUE(d.wait_log(name, seconds(10)))
        << "no log line for " << name << "; exit " << d.wait_exit(milliseconds(0)).value_or(-1) << "\n"
        << d.log();
    ASSERT_TRUE(d.running()) << name << " stopped emqd while it waited for the server:\n" << d.log();
  }
  // Still waiting, not merely alive: once the server answers, it runs jobs.
  server.start();
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string id = put("q", "after the signals");
  ASSERT_TRUE(settled("q", 1)) << d.log();
  EXPECT_EQ(row("q", id)["result"], "after the signals");
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

class StopSignals : public Signals, public ::testing::WithParamInterface<int> {};

TEST_P(StopSignals, StopTheStartupWaitCleanly) {
  server.stop();
  EmqdProcess d(cat_queue());
  ASSERT_TRUE(d.wait_log("waiting for the server", seconds(20))) << d.log();
  d.signal(GetParam());
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
  EXPECT_NE(d.log().find(GetParam() == SIGTERM ? "received SIGTERM" : "received SIGINT"), std::string::npos) << d.log();
}

INSTANTIATE_TEST_SUITE_P(TermAndInt, StopSignals, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& p) { return std::string(p.param == SIGTERM ? "SIGTERM" : "SIGINT"); });

// A SIGHUP during the drain is not the second stop signal: the running job
// still gets its drain time and completes rather than being released.
TEST_F(Signals, SighupDuringTheDrainDoesNotCutItShort) {
  const std::string started = server.dir() + "/started";
  EmqdProcess d(config_head(server) +
                "  - name: q\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo > " +
                started + "; sleep 2; cat\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string id = put("q", "drained");
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(started); }, seconds(10))) << d.log();
  d.signal(SIGTERM);
  ASSERT_TRUE(d.wait_log("draining:", seconds(5))) << d.log();
  d.signal(SIGHUP);
  ASSERT_TRUE(d.wait_log("received SIGHUP", seconds(5))) << d.log();
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_EQ(d.log().find("second signal"), std::string::npos) << d.log();
  EXPECT_EQ(row("q", id)["state"], "completed") << d.log();
  EXPECT_EQ(row("q", id)["result"], "drained");
}

}  // namespace
}  // namespace echomq::test
