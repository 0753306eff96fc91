// describe() is what `emqd --check-config` prints: the resolved values, one
// stable line each, so two runs or two hosts can be diffed.
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// @GOOD@ is tests/configs/good, @BIN@ the PATH directory the test makes.
const char* kFullDescribed = R"(configuration   @GOOD@/full.yaml
valkey          valkey://worker@127.0.0.1:6390/2
  password      from $EMQ_TEST_FULL_PASSWORD
  timeouts      connect 1500 ms, command none
  keyspace      events on
  noeviction    required
  executor      auto
metrics         [::1]:9500
log             debug, json
reaper          every 250 ms, up to 50 jobs
shutdown        drain up to 12.5 s
daemon          named worker-7, beating every 2.5 s
tracing         spans over OTLP/HTTP to http://otel.internal:4318/v1/traces (from tracing.endpoint), as service emqd-full
  sampling      a job's sampled context is kept; 0.5 of the traces emqd starts
  headers       1 from @GOOD@/files/otlp-headers (not shown)
  queue         up to 2048 spans, then dropped; a batch of up to 512 every 5000 ms

queue           emails
  concurrency   8
  prefetch      8 claimed ahead
  lease         20000 ms
  attempts      3
  backoff       500 ms x3, at most 60000 ms, jitter 0.1
  keep          completed 3600 s, dead 86400 s
  idle poll     up to 250 ms
  limits        none in the config: meta's, if any (emq limit)
  groups        none in the config: the server's, if any (emq group set)
  events        a stream of about 10000 entries, written to meta at start
  handler       exec ["/bin/cat","--","a b"]
  timeout       45 s, then SIGTERM, SIGKILL after 2 s
  cwd           @GOOD@/files
  env           scrubbed (EMQ_*, PATH, LANG) + LANG, RELAY_PORT, SHARED
  output        up to 4096 bytes
  permanent     exit 65, 78 (dead at once)

queue           thumbs.v2
  concurrency   2
  lease         60000 ms
  attempts      10
  backoff       2000 ms x3, at most 60000 ms, jitter 0.1
  keep          completed 0 s, dead 86400 s
  idle poll     up to 1000 ms
  limits        none in the config: meta's, if any (emq limit)
  groups        none in the config: the server's, if any (emq group set)
  events        a stream of about 10000 entries, written to meta at start
  handler       pool ["@BIN@/sh","-c","exec cat"]
  timeout       1.5 s, then SIGTERM, SIGKILL after 2 s
  cwd           @GOOD@
  env           emqd's whole environment + LANG, SHARED
  output        up to 1048576 bytes
  recycle       after 10000 jobs per process

queue           fast_resize
  concurrency   2
  lease         20000 ms
  attempts      3
  backoff       500 ms x1.5, at most 60000 ms, jitter 0
  keep          completed 3600 s, dead 86400 s
  idle poll     up to 250 ms
  limits        none in the config: meta's, if any (emq limit)
  groups        none in the config: the server's, if any (emq group set)
  events        a stream of about 10000 entries, written to meta at start
  handler       plugin @GOOD@/files/placeholder.so
  config keys   label, nested, quality, ratio, sharpen, sizes
)";

TEST(Describe, FullConfigReadsAsExpectedLineByLine) {
  TempDir dir;
  dir.write("bin/sh", "#!/bin/sh\nexit 0\n", 0755);
  ScopedEnv path("PATH", (dir.path() + "/bin").c_str());
  ScopedEnv password("EMQ_TEST_FULL_PASSWORD", "not-shown");
  const std::string want =
      replace_all(replace_all(kFullDescribed, "@GOOD@", configs_dir() + "/good"), "@BIN@", dir.path() + "/bin");
  EXPECT_EQ(describe(load_config(good_config("full.yaml"))), want);
}

TEST(Describe, EmbeddedServerAndDefaults) {
  ScopedEnv state("STATE_DIRECTORY", "/var/lib/echomq");
  const std::string text = describe(load_config(good_config("embedded.yaml")));
  EXPECT_NE(text.find("valkey          embedded valkey-server in /var/lib/echomq\n"
                      "  password      none\n"
                      "  timeouts      connect 2000 ms, command 5000 ms\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("metrics         off\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  timeout       none (the lease still fences the job)\n"
                      "  cwd           " +
                      configs_dir() +
                      "/good\n"
                      "  env           scrubbed (EMQ_*, PATH, LANG)\n"
                      "  output        up to 1048576 bytes\n"
                      "  permanent     exit 65 (dead at once)\n"),
            std::string::npos)
      << text;
}

TEST(Describe, SchedulesShowTheirRuleAndGraceButNotTheirPayload) {
  TempDir dir;
  const std::string path =
      dir.write("s.yaml",
                "queues:\n  - { name: mail, handler: { type: exec, command: [/bin/cat] } }\n"
                "schedules:\n"
                "  - { name: nightly, queue: mail, cron: \"30 2 * * *\", timezone: Europe/Berlin, overlap: skip,\n"
                "      payload: \"token=s3cret\", lane: -5 }\n"
                "  - { name: beat, queue: mail, every: 90s, misfire_grace: 5s }\n");
  const std::string text = describe(load_config(path));
  EXPECT_NE(text.find("\nschedule        nightly on mail\n"
                      "  when          cron \"30 2 * * *\" in Europe/Berlin\n"
                      "  overlap       skip while its last job is unfinished\n"
                      "  grace         60000 ms to fire a missed tick\n"
                      "  job           12 bytes of payload, lane -5\n"
                      "\nschedule        beat on mail\n"
                      "  when          every 90000 ms\n"
                      "  overlap       allow\n"
                      "  grace         5000 ms to fire a missed tick\n"
                      "  job           0 bytes of payload, lane 0\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << "a payload may hold a secret";
}

}  // namespace
}  // namespace echomq::daemon::test
