// The long-lived handler kinds misbehaving: pool processes that print
// garbage, answer for another job or die mid-job each fail that job for
// retry and are replaced, while a sound pool queue and an exec queue of the
// same daemon go on; a plugin whose create() fails stops the daemon before
// it claims anything, with the plugin's own message.
#include <filesystem>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class PoolPluginFaults : public Faults {};

std::string pool_queue(const std::string& name, const std::string& program) {
  return "  - name: " + name +
         "\n    max_attempts: 2\n    keep_completed_s: 300\n"
         "    backoff: { initial_ms: 50, multiplier: 1.0, max_ms: 50, jitter: 0 }\n"
         "    handler:\n      type: pool\n      timeout_s: 60\n      command: [\"" +
         program + "\"]\n";
}

TEST_F(PoolPluginFaults, BrokenPoolProcessesFailTheirJobAndAreReplacedWhileOtherQueuesGoOn) {
  const int port = free_loopback_port();
  FaultSettings f;
  f.metrics_port = port;
  EmqdProcess d(fault_config_head(server.url(), f) + pool_queue("garbage", EMQ_TEST_HANDLERS "/pool_garbage.py") +
                pool_queue("wrongid", EMQ_TEST_HANDLERS "/pool_wrong_id.py") +
                pool_queue("dies", EMQ_TEST_HANDLERS "/pool_dies.py") +
                // What fuzz/pool_frame_fuzz found: a number past a double.
                pool_queue("overflow", "/bin/sh\", \"-c\", \"while read -r l; do echo '{\\\"n\\\": 3e333}'; done") +
                pool_queue("sound", EMQ_SOURCE_DIR "/examples/handlers/pool/echo_upper.py") +
                ledger_queue("steady", 2, 30000, ledger_path(), "a", ":"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string garbage = put("garbage", "x"), wrong = put("wrongid", "x"), dies = put("dies", "x"),
                    overflow = put("overflow", "x");
  std::vector<std::string> sound;
  for (int i = 0; i < 20; ++i) sound.push_back(put("sound", "job " + std::to_string(i)));
  std::vector<std::string> steady = put_many("steady", 50);

  // Generous: each replacement starts a Python interpreter, slow on a busy machine.
  for (const char* q : {"garbage", "wrongid", "dies", "overflow"}) {
    ASSERT_TRUE(settled(q, 1, seconds(90))) << q << d.log();
  }
  ASSERT_TRUE(settled("sound", 20, seconds(60))) << d.log();
  ASSERT_TRUE(all_completed(x, "steady", 50, seconds(30))) << d.log();

  auto expect_dead = [&](const std::string& q, const std::string& id, const std::string& says) {
    auto r = row(q, id);
    EXPECT_EQ(r["state"], "dead") << q;
    EXPECT_EQ(r["attempts"], "2") << q << ": retried once, as any failure";
    EXPECT_NE(r["error"].find(says), std::string::npos) << q << ": " << r["error"];
  };
  expect_dead("garbage", garbage, "this is not json");
  expect_dead("wrongid", wrong, "answered for job");
  expect_dead("dies", dies, "exited during the job");
  expect_dead("overflow", overflow, "not JSON (number overflow");
  for (std::size_t i = 0; i < sound.size(); ++i) {
    auto r = row("sound", sound[i]);
    EXPECT_EQ(r["state"], "completed") << r["error"];
  }
  EXPECT_EQ(read_ledger(ledger_path()).lines, 50u);
  // Each broken process is replaced after each broken job: twice per queue
  // (the replacement starts in the background, after the job is settled).
  for (const char* q : {"garbage", "wrongid", "dies", "overflow"}) {
    const std::string series = std::string("emq_handler_restarts_total{queue=\"") + q + "\"}";
    EXPECT_TRUE(wait_for([&] { return metric(port, series) >= 2; }, seconds(30)))
        << series << " " << metric(port, series);
  }
  EXPECT_EQ(metric(port, "emq_handler_restarts_total{queue=\"sound\"}"), 0);
  report_figures("pool faults (garbage line, wrong id, death mid-job, number past a double)",
                 "faulty=4 dead_after_2_attempts=4 sound_completed=20 exec_completed=50 restarts garbage=" +
                     std::to_string(int(metric(port, "emq_handler_restarts_total{queue=\"garbage\"}"))));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

TEST_F(PoolPluginFaults, APluginWhoseCreateFailsStopsTheDaemonBeforeAnyClaim) {
  const std::string plugin = std::string(EMQ_LIB_DIR) + "/test-plugins/libcreate_fails.so";
  if (!std::filesystem::exists(plugin)) GTEST_SKIP() << plugin << " is not built (tests/plugins/create_fails.c)";
  put("refused", "x");
  EmqdProcess d(fault_config_head(server.url(), {}) +
                "  - name: refused\n    handler:\n      type: plugin\n      path: " + plugin +
                "\n      config: { colour: blue }\n");
  const std::optional<int> code = d.wait_exit(seconds(20));
  ASSERT_TRUE(code.has_value()) << d.log();
  EXPECT_NE(*code, 0) << d.log();
  EXPECT_LT(*code, 128) << "an orderly refusal, not a crash: " << d.log();
  EXPECT_NE(d.log().find("create_fails wants a \"threshold\" key"), std::string::npos) << d.log();
  EXPECT_EQ(d.log().find("ready:"), std::string::npos);
  QueueStats s = stats_of("refused");
  EXPECT_EQ(s.pending, 1) << "nothing may be claimed";
  EXPECT_EQ(s.active, 0);
  report_figures("plugin create() fails", "exit=" + std::to_string(*code) + " claimed=0");
}

}  // namespace
}  // namespace echomq::test
