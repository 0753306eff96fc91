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

// A managed server blocks CONFIG but publishes the keyspace events its
// operator set in the provider's parameters. emqd cannot read the setting,
// so it listens all the same (polling stays the safety net) instead of
// polling for ever; the log says why and what to set.
TEST(StartupCheck, KeyspaceEventsAreHeardWhereConfigIsBlocked) {
  ValkeyServer managed(
      ValkeyServer::Options{false, {"--rename-command", "CONFIG", "", "--notify-keyspace-events", "Kz"}});
  EmqdProcess d(fault_config_head(managed.url(), {}) + ok_queue("events"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string channel = "__keyspace@0__:" + QueueKeys("events").pending;
  EXPECT_TRUE(wait_for(
      [&] {
        return managed.cli({"PUBSUB", "NUMSUB", channel}).find("\n1") != std::string::npos;
      },
      seconds(10)))
      << "nobody listens on " << channel << "\n"
      << d.log();
  EXPECT_NE(d.log().find("cannot read notify-keyspace-events"), std::string::npos) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
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

// A transient refusal during the start-up checks (here READONLY: the server
// became a replica of a primary that is gone, so it keeps its data and
// refuses writes) is waited out as a connect is, not the end of start-up.
TEST(StartupCheck, ATransientRefusalDuringTheChecksIsWaitedOutLikeAConnect) {
  ValkeyServer replica;
  Executor rx(replica.options());
  rx.ensure_connected();  // {emq}:version is emq/1 before it turns replica
  ASSERT_EQ(rx.command({"REPLICAOF", "127.0.0.1", std::to_string(free_loopback_port())}).str, "OK");
  EmqdProcess d(fault_config_head(replica.url(), {}) + ok_queue("ro_start"));
  ASSERT_TRUE(d.wait_log("READONLY", seconds(20))) << d.log();
  EXPECT_FALSE(d.wait_exit(milliseconds(1500)).has_value()) << "a replica is a wait, not a refusal:\n" << d.log();
  ASSERT_EQ(rx.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  ASSERT_TRUE(d.wait_ready(seconds(20))) << d.log();
  enqueue(rx, QueueKeys("ro_start"), mint_job_id(), "x");
  EXPECT_TRUE(wait_for([&] { return stats(rx, QueueKeys("ro_start")).counters["completed"] == 1; }, seconds(10)));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

TEST(StartupCheck, AVersionKeyOfTheWrongTypeIsRefusedWithEmqwire) {
  ValkeyServer other;
  ASSERT_EQ(other.cli({"HSET", "{emq}:version", "v", "1"}), "1\n");
  EmqdProcess d(fault_config_head(other.url(), {}) + ok_queue("wire"));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("EMQWIRE"), std::string::npos) << d.log();
  EXPECT_EQ(other.cli({"TYPE", "{emq}:version"}), "hash\n") << "another program's data is left alone";
}

// A wrong password is retried (an operator may fix the server's side), but
// /healthz and the log say plainly that the login is refused and which key
// holds the password, instead of "waiting for the server".
TEST(StartupCheck, ARefusedLoginIsSaidPlainlyWithTheKeyToFix) {
  ValkeyServer locked(ValkeyServer::Options{false, {"--requirepass", "right-one"}});
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  f.valkey_extra = "  password_env: EMQ_TEST_LOGIN_PW\n";
  EmqdProcess d(fault_config_head(locked.url(), f) + ok_queue("login"), {}, {"EMQ_TEST_LOGIN_PW=wrong-one"});
  ASSERT_TRUE(d.wait_log("refuses the login", seconds(20))) << d.log();
  EXPECT_NE(d.log().find("valkey.password_env (the variable EMQ_TEST_LOGIN_PW)"), std::string::npos) << d.log();
  EXPECT_EQ(d.log().find("wrong-one"), std::string::npos) << "never log a secret";
  HttpAnswer h;
  ASSERT_TRUE(wait_for(
      [&] {
        try {
          h = http_get(f.metrics_port, "/healthz");
          return h.body.find("refuses the login") != std::string::npos;
        } catch (const std::exception&) {
          return false;
        }
      },
      seconds(10)))
      << h.body;
  EXPECT_EQ(h.status, 503);
  EXPECT_NE(h.body.find("valkey.password_env"), std::string::npos) << h.body;
  EXPECT_TRUE(d.running()) << "retried: the server's side may be what is fixed";
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

// FLUSHALL empties {emq}:queues too; the daemon puts its queues back, so
// `emq stats` with no names finds them again, whether or not it serves
// metrics (it did so only with metrics.listen set).
void expect_registered_again_after_a_flushall(int metrics_port) {
  ValkeyServer s;
  Executor sx(s.options());
  FaultSettings f;
  f.metrics_port = metrics_port;
  EmqdProcess d(fault_config_head(s.url(), f) + ok_queue("flushed"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_EQ(known_queues(sx), std::vector<std::string>{"flushed"});
  ASSERT_EQ(sx.command({"FLUSHALL"}).str, "OK");
  EXPECT_TRUE(wait_for([&] { return known_queues(sx) == std::vector<std::string>{"flushed"}; }, seconds(10)))
      << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

TEST(StartupCheck, QueuesAreRegisteredAgainAfterAFlushall) {
  expect_registered_again_after_a_flushall(free_loopback_port());
}

TEST(StartupCheck, QueuesAreRegisteredAgainAfterAFlushallWithoutMetrics) {
  expect_registered_again_after_a_flushall(0);
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
    EXPECT_NE(second.log().find("another emqd already runs on the state directory"), std::string::npos) << second.log();

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
