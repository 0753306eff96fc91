// Good configurations resolve to the structs the daemon runs on: defaults
// in place, `defaults:` inherited by every queue, a queue's own keys
// winning, backoff and env merged key by key, paths made absolute.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

using Type = HandlerConfig::Type;
using Env = std::map<std::string, std::string>;

void expect_backoff(const BackoffPolicy& b, std::int64_t initial, double multiplier, std::int64_t max, double jitter) {
  EXPECT_EQ(b.initial_ms, initial);
  EXPECT_DOUBLE_EQ(b.multiplier, multiplier);
  EXPECT_EQ(b.max_ms, max);
  EXPECT_DOUBLE_EQ(b.jitter, jitter);
}

class FullConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    // `sh` in full.yaml is a bare name: give PATH one place to find it.
    sh_ = bin_.write("bin/sh", "#!/bin/sh\nexit 0\n", 0755);
    config_ = load_config(good_config("full.yaml"));
  }
  TempDir bin_;
  std::string sh_;
  ScopedEnv password_{"EMQ_TEST_FULL_PASSWORD", "full-config-password"};
  ScopedEnv path_{"PATH", (bin_.path() + "/bin").c_str()};
  Config config_;
};

TEST_F(FullConfig, TopLevelSections) {
  EXPECT_EQ(config_.path, good_config("full.yaml"));
  const ValkeyConfig& v = config_.valkey;
  EXPECT_EQ(v.url, "valkey://127.0.0.1:6390/2");
  EXPECT_FALSE(v.embedded);
  EXPECT_EQ(v.embedded_dir, "");
  EXPECT_EQ(v.username, "worker");
  EXPECT_EQ(v.password_env, "EMQ_TEST_FULL_PASSWORD");
  EXPECT_EQ(v.password_file, "");
  EXPECT_EQ(v.password, "full-config-password");
  EXPECT_EQ(v.connect_timeout_ms, 1500);
  EXPECT_EQ(v.command_timeout_ms, 0);
  EXPECT_TRUE(v.keyspace_events);
  EXPECT_TRUE(v.require_noeviction);
  EXPECT_EQ(config_.metrics.listen, "[::1]:9500");
  EXPECT_EQ(config_.log.level, "debug");
  EXPECT_EQ(config_.log.format, "json");
  EXPECT_EQ(config_.reaper.interval_ms, 250);
  EXPECT_EQ(config_.reaper.batch, 50);
  EXPECT_DOUBLE_EQ(config_.shutdown.drain_timeout_s, 12.5);
  EXPECT_EQ(config_.daemon.name, "worker-7");
  EXPECT_DOUBLE_EQ(config_.daemon.beat_s, 2.5);
  const TracingConfig& t = config_.tracing;
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.url, "http://otel.internal:4318/v1/traces");
  EXPECT_DOUBLE_EQ(t.sample_ratio, 0.5);
  EXPECT_EQ(t.service_name, "emqd-full");
  EXPECT_EQ(t.headers_file, good_config("files/otlp-headers"));
  EXPECT_EQ(t.headers.size(), 1u);
  ASSERT_EQ(config_.queues.size(), 3u);
}

TEST_F(FullConfig, ExecQueueInheritsDefaultsAndOverridesConcurrency) {
  ASSERT_EQ(config_.queues.size(), 3u);
  const QueueConfig& q = config_.queues[0];
  EXPECT_EQ(q.name, "emails");
  EXPECT_EQ(q.concurrency, 8);
  EXPECT_EQ(q.prefetch, 8);
  EXPECT_EQ(q.lease_ms, 20000);
  EXPECT_EQ(q.max_attempts, 3);
  expect_backoff(q.backoff, 500, 3, 60000, 0.1);
  EXPECT_EQ(q.keep_completed_s, 3600);
  EXPECT_EQ(q.keep_dead_s, 86400);
  EXPECT_EQ(q.poll_max_ms, 250);
  const HandlerConfig& h = q.handler;
  EXPECT_EQ(h.type, Type::Exec);
  EXPECT_EQ(h.command, (std::vector<std::string>{"/bin/cat", "--", "a b"}));
  EXPECT_EQ(h.cwd, configs_dir() + "/good/files");
  EXPECT_DOUBLE_EQ(h.timeout_s, 45);
  EXPECT_DOUBLE_EQ(h.kill_grace_s, 2);
  EXPECT_EQ(h.max_output_bytes, 4096);
  EXPECT_EQ(h.permanent_exit_codes, (std::vector<int>{65, 78}));
  EXPECT_FALSE(h.inherit_env);
  // The queue's env adds to the defaults' and wins where both name a variable.
  EXPECT_EQ(h.env, (Env{{"LANG", "C.UTF-8"}, {"RELAY_PORT", "25"}, {"SHARED", "from emails"}}));
}

TEST_F(FullConfig, PoolQueueOverridesAndMergesBackoff) {
  ASSERT_EQ(config_.queues.size(), 3u);
  const QueueConfig& q = config_.queues[1];
  EXPECT_EQ(q.name, "thumbs.v2");
  EXPECT_EQ(q.concurrency, 2);
  EXPECT_EQ(q.prefetch, 0) << "nothing is claimed ahead unless asked";
  EXPECT_EQ(q.lease_ms, 60000);
  EXPECT_EQ(q.max_attempts, 10);
  expect_backoff(q.backoff, 2000, 3, 60000, 0.1);  // only initial_ms is its own
  EXPECT_EQ(q.keep_completed_s, 0);
  EXPECT_EQ(q.keep_dead_s, 86400);
  EXPECT_EQ(q.poll_max_ms, 1000);
  const HandlerConfig& h = q.handler;
  EXPECT_EQ(h.type, Type::Pool);
  EXPECT_EQ(h.command, (std::vector<std::string>{sh_, "-c", "exec cat"}));  // found on PATH
  EXPECT_EQ(h.cwd, configs_dir() + "/good") << "a handler without cwd runs beside its config file";
  EXPECT_DOUBLE_EQ(h.timeout_s, 1.5);
  EXPECT_DOUBLE_EQ(h.kill_grace_s, 2);
  EXPECT_EQ(h.max_output_bytes, 1048576);
  EXPECT_TRUE(h.inherit_env);
  EXPECT_EQ(h.env, (Env{{"LANG", "C.UTF-8"}, {"SHARED", "from defaults"}}));
  EXPECT_EQ(h.max_jobs_per_process, 10000);
}

TEST_F(FullConfig, PluginQueueConfigBecomesJson) {
  ASSERT_EQ(config_.queues.size(), 3u);
  const QueueConfig& q = config_.queues[2];
  EXPECT_EQ(q.name, "fast_resize");
  EXPECT_EQ(q.concurrency, 2);
  EXPECT_EQ(q.lease_ms, 20000);
  expect_backoff(q.backoff, 500, 1.5, 60000, 0);
  EXPECT_EQ(q.handler.type, Type::Plugin);
  EXPECT_EQ(q.handler.path, configs_dir() + "/good/files/placeholder.so");
  EXPECT_TRUE(q.handler.command.empty());
  const nlohmann::json want = {
      {"quality", 80},  {"ratio", 0.75},      {"sharpen", true},
      {"label", "007"}, {"sizes", {64, 128}}, {"nested", {{"mode", "fast"}, {"none", nullptr}}},
  };
  EXPECT_EQ(nlohmann::json::parse(q.handler.plugin_config_json), want) << q.handler.plugin_config_json;
}

TEST(MinimalConfig, EverythingElseIsTheDocumentedDefault) {
  const Config c = load_config(good_config("minimal.yaml"));
  EXPECT_EQ(c.valkey.url, "valkey://127.0.0.1:6379/0");
  EXPECT_FALSE(c.valkey.embedded);
  EXPECT_EQ(c.valkey.password, "");
  EXPECT_EQ(c.valkey.connect_timeout_ms, 2000);
  EXPECT_EQ(c.valkey.command_timeout_ms, 5000);
  EXPECT_FALSE(c.valkey.keyspace_events);
  EXPECT_FALSE(c.valkey.require_noeviction);
  EXPECT_EQ(c.metrics.listen, "127.0.0.1:9464");
  EXPECT_EQ(c.log.level, "info");
  EXPECT_EQ(c.log.format, "text");
  EXPECT_EQ(c.reaper.interval_ms, 1000);
  EXPECT_EQ(c.reaper.batch, 500);
  EXPECT_DOUBLE_EQ(c.shutdown.drain_timeout_s, 30);
  EXPECT_EQ(c.daemon.name, "");
  EXPECT_DOUBLE_EQ(c.daemon.beat_s, 5);
  ASSERT_EQ(c.queues.size(), 1u);
  const QueueConfig& q = c.queues[0];
  EXPECT_EQ(q.name, "jobs");
  EXPECT_EQ(q.concurrency, 1);
  EXPECT_EQ(q.lease_ms, 30000);
  EXPECT_EQ(q.max_attempts, 5);
  expect_backoff(q.backoff, 1000, 2.0, 3600000, 0.2);
  EXPECT_EQ(q.keep_completed_s, 0);
  EXPECT_EQ(q.keep_dead_s, 604800);
  EXPECT_EQ(q.poll_max_ms, 100);
  EXPECT_EQ(q.handler.type, Type::Exec);
  EXPECT_EQ(q.handler.command, (std::vector<std::string>{"/bin/cat"}));
  EXPECT_DOUBLE_EQ(q.handler.timeout_s, 0);
  EXPECT_DOUBLE_EQ(q.handler.kill_grace_s, 5);
  EXPECT_EQ(q.handler.max_output_bytes, 1 << 20);
  EXPECT_EQ(q.handler.permanent_exit_codes, (std::vector<int>{65}));
  EXPECT_FALSE(q.handler.inherit_env);
  EXPECT_TRUE(q.handler.env.empty());
}

TEST(PasswordFile, IsReadNextToTheConfigWithoutItsTrailingNewline) {
  const Config c = load_config(good_config("password_file.yaml"));
  EXPECT_EQ(c.valkey.password, "from-the-file");
  EXPECT_EQ(c.valkey.password_file, configs_dir() + "/good/files/valkey-password");
  EXPECT_EQ(c.valkey.url, "unix:///run/valkey/valkey.sock?db=1");
}

TEST(PasswordFile, CrLfEndingsAreStrippedButInnerSpacesKept) {
  TempDir dir;
  dir.write("secret", " two words \r\n\n");
  const std::string path = dir.write("emqd.yaml",
                                     "valkey: { password_file: secret }\n"
                                     "queues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n");
  EXPECT_EQ(load_config(path).valkey.password, " two words ");
}

TEST(Embedded, StateDirectoryDefaultsNextToTheConfigFile) {
  ScopedEnv state("STATE_DIRECTORY", nullptr);
  const Config c = load_config(good_config("embedded.yaml"));
  EXPECT_TRUE(c.valkey.embedded);
  EXPECT_EQ(c.valkey.url, "embedded");
  EXPECT_EQ(c.valkey.embedded_dir, configs_dir() + "/good/emqd-state");
  EXPECT_EQ(c.metrics.listen, "");
}

TEST(Embedded, StateDirectoryComesFromSystemdWhenSet) {
  ScopedEnv state("STATE_DIRECTORY", "/var/lib/echomq:/var/lib/other");
  EXPECT_EQ(load_config(good_config("embedded.yaml")).valkey.embedded_dir, "/var/lib/echomq");
}

TEST(Embedded, AnExplicitDirectoryIsMadeAbsolute) {
  ScopedEnv state("STATE_DIRECTORY", "/var/lib/echomq");
  TempDir dir;
  const std::string path = dir.write("emqd.yaml",
                                     "valkey: { url: embedded, embedded_dir: state/../valkey }\n"
                                     "queues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n");
  EXPECT_EQ(load_config(path).valkey.embedded_dir, dir.path() + "/valkey");
}

}  // namespace
}  // namespace echomq::daemon::test
