// HandlerEnv: the scrubbed environment, exactly; the daemon's only with
// inherit_env; the secret names never.
#include "handlers/handler_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace echomq::daemon {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

const char* const kDaemonEnv[] = {
    "PATH=/opt/app/bin:/usr/bin",
    "LANG=fr_FR.UTF-8",
    "HOME=/var/lib/emqd",
    "EMQ_VALKEY_PASSWORD=hunter2",
    "AWS_SECRET_ACCESS_KEY=also-secret",
    "NOT_A_VARIABLE",
    nullptr,
};

Job job() {
  Job j;
  j.queue = "emails";
  j.id = "JOB_01JABCDEF";
  j.attempt = 3;
  j.deadline_ms = 1700000000123;
  return j;
}

TEST(HandlerEnv, ScrubbedByDefault) {
  HandlerConfig config;
  config.env = {{"RELAY_PORT", "25"}};
  HandlerEnv env(config, {"EMQ_VALKEY_PASSWORD"}, kDaemonEnv);
  EXPECT_THAT(env.for_job(job()),
              ElementsAre("EMQ_ATTEMPT=3", "EMQ_DEADLINE_MS=1700000000123", "EMQ_JOB_ID=JOB_01JABCDEF",
                          "EMQ_QUEUE=emails", "LANG=fr_FR.UTF-8", "PATH=/opt/app/bin:/usr/bin", "RELAY_PORT=25"));
}

TEST(HandlerEnv, DefaultPathAndLangWhenTheDaemonHasNone) {
  const char* const bare[] = {"HOME=/root", "LANG=", nullptr};
  HandlerEnv env(HandlerConfig{}, {}, bare);
  EXPECT_THAT(env.for_job(job()),
              ElementsAre("EMQ_ATTEMPT=3", "EMQ_DEADLINE_MS=1700000000123", "EMQ_JOB_ID=JOB_01JABCDEF",
                          "EMQ_QUEUE=emails", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin"));
  HandlerEnv empty(HandlerConfig{}, {}, nullptr);
  EXPECT_THAT(empty.for_job(job()), Contains("PATH=/usr/local/bin:/usr/bin:/bin"));
}

TEST(HandlerEnv, InheritEnvPassesTheDaemonsButNeverTheDroppedNames) {
  HandlerConfig config;
  config.inherit_env = true;
  HandlerEnv env(config, {"EMQ_VALKEY_PASSWORD", "AWS_SECRET_ACCESS_KEY"}, kDaemonEnv);
  EXPECT_THAT(env.for_job(job()),
              ElementsAre("EMQ_ATTEMPT=3", "EMQ_DEADLINE_MS=1700000000123", "EMQ_JOB_ID=JOB_01JABCDEF",
                          "EMQ_QUEUE=emails", "HOME=/var/lib/emqd", "LANG=fr_FR.UTF-8", "PATH=/opt/app/bin:/usr/bin"));
}

TEST(HandlerEnv, InheritEnvNeverPassesTheServersOtherPasswordCarriers) {
  const char* const daemon_env[] = {"EMQ_PASSWORD=hunter2",
                                    "EMQ_URL=valkey://:hunter2@cache:6379/0",
                                    "VALKEYCLI_AUTH=hunter2",
                                    "REDISCLI_AUTH=hunter2",
                                    "HOME=/root",
                                    nullptr};
  HandlerConfig config;
  config.inherit_env = true;
  HandlerEnv env(config, {}, daemon_env);
  EXPECT_THAT(env.base(),
              ElementsAre(std::pair<const std::string, std::string>("HOME", "/root"),
                          std::pair<const std::string, std::string>("LANG", "C.UTF-8"),
                          std::pair<const std::string, std::string>("PATH", "/usr/local/bin:/usr/bin:/bin")));
}

TEST(HandlerEnv, ConfiguredEnvOverridesPathButNotTheJobsVariables) {
  HandlerConfig config;
  config.env = {{"PATH", "/srv/bin"}, {"EMQ_JOB_ID", "forged"}, {"LANG", "de_DE.UTF-8"}};
  HandlerEnv env(config, {}, kDaemonEnv);
  const auto vars = env.for_job(job());
  EXPECT_THAT(vars, Contains("PATH=/srv/bin"));
  EXPECT_THAT(vars, Contains("LANG=de_DE.UTF-8"));
  EXPECT_THAT(vars, Contains("EMQ_JOB_ID=JOB_01JABCDEF"));
  EXPECT_THAT(vars, Not(Contains("EMQ_JOB_ID=forged")));
}

// OpenTelemetry's environment carrier: the job's span, and only the job's.
TEST(HandlerEnv, ATracedJobsContextIsTraceparentAndTracestate) {
  const char* const daemon_env[] = {"TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01",
                                    "TRACESTATE=emqd=itself", "PATH=/usr/bin", nullptr};
  HandlerConfig config;
  config.inherit_env = true;
  HandlerEnv env(config, {}, daemon_env);
  Job traced = job();
  traced.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  traced.tracestate = "vendor=opaque";
  EXPECT_THAT(env.for_job(traced), Contains("TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  EXPECT_THAT(env.for_job(traced), Contains("TRACESTATE=vendor=opaque"));
  // emqd's own context is no job's: a job without one gets none.
  const auto plain = env.for_job(job());
  for (const std::string& var : plain) {
    EXPECT_NE(var.rfind("TRACE", 0), 0u) << var;
  }
  traced.tracestate.clear();
  for (const std::string& var : env.for_job(traced)) {
    EXPECT_NE(var.rfind("TRACESTATE=", 0), 0u) << var;
  }
}

TEST(HandlerEnv, BaseHasNoJobVariables) {
  HandlerEnv env(HandlerConfig{}, {}, kDaemonEnv);
  EXPECT_EQ(env.base().size(), 2u);
  EXPECT_EQ(env.base().at("PATH"), "/opt/app/bin:/usr/bin");
}

}  // namespace
}  // namespace echomq::daemon
