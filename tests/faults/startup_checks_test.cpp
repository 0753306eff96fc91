// What emqd checks before it claims anything, through the real binary: a
// server that may evict (warned, or refused on request), a server that
// speaks another wire (refused), the executor asked for or chosen (native
// without the module refused), and a second daemon on the same embedded
// state directory (refused, and the first one unharmed).
#include <filesystem>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

std::string ok_queue(const std::string& name) {
  return "  - name: " + name + "\n    handler:\n      type: exec\n      command: [\"" EMQ_TEST_HANDLERS "/ok.sh\"]\n";
}

TEST(StartupCheck, AnEvictingServerIsWarnedAboutAndTheDaemonStillRuns) {
  ValkeyServer lru(ValkeyServer::Options{false, {"--maxmemory-policy", "allkeys-lru"}});
  Executor lx(lru.options());
  EmqdProcess d(fault_config_head(lru.url(), {}) + ok_queue("evict"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_NE(d.log().find("maxmemory-policy is 'allkeys-lru'"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("Set maxmemory-policy noeviction"), std::string::npos) << "the warning says what to do";
  enqueue(lx, QueueKeys("evict"), mint_job_id(), "x");
  EXPECT_TRUE(wait_for([&] { return stats(lx, QueueKeys("evict")).counters["completed"] == 1; }, seconds(10)));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

TEST(StartupCheck, RequireNoevictionRefusesAnEvictingServer) {
  ValkeyServer lru(ValkeyServer::Options{false, {"--maxmemory-policy", "volatile-lru"}});
  Executor lx(lru.options());
  enqueue(lx, QueueKeys("evict"), mint_job_id(), "x");
  FaultSettings f;
  f.valkey_extra = "  require_noeviction: true\n";
  EmqdProcess d(fault_config_head(lru.url(), f) + ok_queue("evict"));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("cannot start"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("maxmemory-policy is 'volatile-lru'"), std::string::npos) << d.log();
  EXPECT_EQ(d.log().find("ready:"), std::string::npos);
  EXPECT_EQ(stats(lx, QueueKeys("evict")).pending, 1) << "nothing may be claimed";
}

TEST(StartupCheck, RequireNoevictionRefusesAServerWhosePolicyCannotBeRead) {
  // Managed servers often rename CONFIG away; the policy is then unknown,
  // and an operator who asked for the guarantee must not get it silently.
  ValkeyServer hidden(ValkeyServer::Options{false, {"--rename-command", "CONFIG", ""}});
  FaultSettings f;
  f.valkey_extra = "  require_noeviction: true\n";
  EmqdProcess d(fault_config_head(hidden.url(), f) + ok_queue("evict"));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("cannot read the server's maxmemory-policy"), std::string::npos) << d.log();

  EmqdProcess lenient(fault_config_head(hidden.url(), {}) + ok_queue("evict"));
  ASSERT_TRUE(lenient.wait_ready()) << lenient.log();
  EXPECT_NE(lenient.log().find("cannot read the server's maxmemory-policy"), std::string::npos)
      << "without require_noeviction it starts, but says it could not check";
  lenient.signal(SIGTERM);
  EXPECT_EQ(lenient.wait_exit(seconds(10)), 0) << lenient.log();
}

TEST(StartupCheck, AServerSpeakingAnotherWireIsRefusedWithEmqwire) {
  ValkeyServer other;
  ASSERT_EQ(other.cli({"SET", "{emq}:version", "emq/2"}), "OK\n");
  ASSERT_EQ(other.cli({"ZADD", "emq:{wire}:pending", "0", "JOB_1"}), "1\n");
  EmqdProcess d(fault_config_head(other.url(), {}) + ok_queue("wire"));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("EMQWIRE"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("emq/2"), std::string::npos) << "the log names what the server holds";
  EXPECT_EQ(other.cli({"GET", "{emq}:version"}), "emq/2\n") << "the daemon must not overwrite another wire";
  EXPECT_EQ(other.cli({"ZCARD", "emq:{wire}:pending"}), "1\n");
}

TEST(StartupCheck, NativeAgainstAServerWithoutTheModuleExitsSayingHowToLoadIt) {
  ValkeyServer plain;
  FaultSettings f;
  f.valkey_extra = "  executor: native\n";
  EmqdProcess d(fault_config_head(plain.url(), f) + ok_queue("native"));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("no emq module"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("loadmodule"), std::string::npos) << "the line says how to load it: " << d.log();
}

TEST(StartupCheck, AutoLogsTheExecutorItChose) {
  ValkeyServer::Options o;
  o.load_module = true;
  ValkeyServer with(o), without;
  EmqdProcess native(fault_config_head(with.url(), {}) + ok_queue("auto"));
  EmqdProcess scripted(fault_config_head(without.url(), {}) + ok_queue("auto"));
  ASSERT_TRUE(native.wait_ready()) << native.log();
  ASSERT_TRUE(scripted.wait_ready()) << scripted.log();
  EXPECT_NE(native.log().find("executor native"), std::string::npos) << native.log();
  EXPECT_NE(scripted.log().find("executor scripted"), std::string::npos) << scripted.log();
  native.signal(SIGTERM);
  scripted.signal(SIGTERM);
  EXPECT_EQ(native.wait_exit(seconds(10)), 0) << native.log();
  EXPECT_EQ(scripted.wait_exit(seconds(10)), 0) << scripted.log();
}

TEST(StartupCheck, ASecondDaemonOnTheSameEmbeddedStateDirectoryIsRefused) {
  if (find_program("valkey-server").empty()) GTEST_SKIP() << "valkey-server is not on PATH";
  char tmpl[] = "/tmp/emqd-embedded-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string config = "valkey:\n  url: embedded\n  embedded_dir: " + dir +
                             "\nmetrics:\n  listen: \"\"\nlog:\n  level: info\nqueues:\n" + ok_queue("emb");
  {
    EmqdProcess first(config);
    ASSERT_TRUE(first.wait_ready(seconds(30))) << first.log();
    EmqdProcess second(config);
    EXPECT_EQ(second.wait_exit(seconds(20)), 1) << second.log();
    EXPECT_NE(second.log().find("another emqd already runs on the state directory"), std::string::npos)
        << second.log();

    // The first is unharmed: its server's socket is still there and serves.
    ConnectionOptions o;
    o.unix_path = dir + "/valkey.sock";
    Executor ex(o);
    enqueue(ex, QueueKeys("emb"), mint_job_id(), "x");
    EXPECT_TRUE(wait_for([&] { return stats(ex, QueueKeys("emb")).counters["completed"] == 1; }, seconds(10)))
        << first.log();
    first.signal(SIGTERM);
    EXPECT_EQ(first.wait_exit(seconds(30)), 0) << first.log();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace echomq::test
