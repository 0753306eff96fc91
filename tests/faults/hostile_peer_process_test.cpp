// Hostile peers on the process side: a handler whose stderr carries
// terminal escapes, carriage returns and bytes that are not UTF-8, and a
// pool whose processes crash at start (a bad deploy). The daemon's log
// stays one escaped event per line, valid JSON when asked; the broken pool
// holds its queue's jobs pending and says so until a process comes up.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "echomq/bytes.h"
#include "fault_fixture.h"

namespace echomq::test {
namespace {

// What a hostile handler writes to stderr: colour and a bell, bytes that are
// not UTF-8, a C1 control, and a carriage return that, shown raw, would
// overwrite the line with a forged one.
const std::string kHostile = std::string("red \x1b[31mALERT\x07 bad \xff\xfe c1 \xc2\x9b end") +
                             "\r2030-01-01T00:00:00.000+0000 info ready: forged\n";

std::string hostile_config(const std::string& url, const std::string& format) {
  std::string head = fault_config_head(url, {});
  const std::string level = "log:\n  level: info\n";
  head.replace(head.find(level), level.size(), level + "  format: " + format + "\n");
  return head + "  - name: hostile\n    concurrency: 1\n    max_attempts: 1\n    handler:\n      type: exec\n" +
         "      command: [\"" EMQ_TEST_HANDLERS "/stderr_lines.sh\"]\n";
}

class HostilePeerProcess : public Faults {
 public:
  std::string server_url() const { return server.url(); }
  void put_hostile() { put("hostile", kHostile); }
  bool settled_hostile() { return settled("hostile", 1); }
};

// The log lines that carry the handler's stderr line (the failure and the
// dead job quote it again, escaped the same way).
std::vector<std::string> stderr_lines_of(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" stderr: ") != std::string::npos && line.find("ALERT") != std::string::npos) out.push_back(line);
  }
  return out;
}

// Runs one hostile job through a daemon logging in `format`; its whole log.
std::string hostile_run(HostilePeerProcess& t, const std::string& format) {
  auto d = start_ready(hostile_config(t.server_url(), format));
  if (!d) return "";
  t.put_hostile();
  EXPECT_TRUE(t.settled_hostile()) << d->log();
  EXPECT_TRUE(d->wait_log("ALERT", seconds(10))) << d->log();
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0);
  return d->log();
}

TEST_F(HostilePeerProcess, HostileStderrStaysOneEscapedTextLinePerEvent) {
  const std::string log = hostile_run(*this, "text");
  ASSERT_FALSE(log.empty());
  for (unsigned char c : log) {
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7f)) << "a raw control byte " << int(c) << " in the log";
  }
  EXPECT_TRUE(is_utf8(log)) << "the log should be UTF-8 whatever the handler wrote";
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("2030-01-01", 0), std::string::npos) << "a forged line: " << line;
  }
  const std::vector<std::string> logged = stderr_lines_of(log);
  ASSERT_EQ(logged.size(), 1u) << log;
  EXPECT_NE(logged[0].find("red \\u001b[31mALERT\\u0007 bad \\xff\\xfe c1 \\u009b end\\r2030-01-01"), std::string::npos)
      << logged[0];
}

TEST_F(HostilePeerProcess, HostileStderrStaysOneValidJsonObjectPerEvent) {
  const std::string log = hostile_run(*this, "json");
  ASSERT_FALSE(log.empty());
  std::istringstream lines(log);
  std::size_t parsed = 0;
  std::string alert;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(is_utf8(line)) << "not UTF-8: " << line;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    ASSERT_TRUE(j.contains("msg")) << line;
    const std::string msg = j["msg"];
    if (msg.find(" stderr: ") != std::string::npos && msg.find("ALERT") != std::string::npos) {
      EXPECT_TRUE(alert.empty()) << "the stderr line was split into two events";
      alert = msg;
    }
    ++parsed;
  }
  EXPECT_GT(parsed, 3u);
  // Decoded, the controls are themselves again (JSON carries them safely);
  // the bytes that are not UTF-8 read \xNN.
  EXPECT_NE(alert.find("red \x1b[31mALERT\x07 bad \\xff\\xfe c1 \xc2\x9b end\r2030-01-01"), std::string::npos) << alert;
}

// A pool command that crash-loops while `broken` exists (a missing module,
// say), and otherwise runs a well-behaved pool handler.
std::string crashy_pool(const std::string& dir, const std::string& broken) {
  const std::string script = dir + "/crashy.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "if [ -e '" +
                               broken +
                               "' ]; then echo 'crashy: ImportError: no module app' >&2; exit 3; fi\n"
                               "exec python3 " EMQ_TEST_HANDLERS "/pool_pid.py\n";
  ::chmod(script.c_str(), 0755);
  return script;
}

TEST_F(HostilePeerProcess, CrashLoopingPoolHoldsItsJobsPendingUntilAProcessComesUp) {
  const int kJobs = 30;
  const std::string broken = server.dir() + "/broken";
  std::ofstream(broken) << "bad deploy\n";
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  const std::string queue = "crashy";
  const std::string up = "emq_handler_up{queue=\"" + queue + "\"}";
  const std::string restarts = "emq_handler_restarts_total{queue=\"" + queue + "\"}";
  std::vector<std::string> ids = put_many(queue, kJobs);

  auto d = start_ready(fault_config_head(server.url(), f) + "  - name: " + queue +
                       "\n    concurrency: 3\n    max_attempts: 3\n    handler:\n      type: pool\n"
                       "      command: [\"" +
                       crashy_pool(server.dir(), broken) + "\"]\n");
  ASSERT_TRUE(d);
  // The crash loop goes on for a while: several replacements, each failing.
  // Until each slot's first process has been seen to die (a slow machine
  // may take a while for one), that slot still counts as up, so the
  // check waits for the pool to say so rather than reading it once.
  HttpAnswer health;
  ASSERT_TRUE(wait_for(
      [&] {
        if (metric(f.metrics_port, restarts) < 6) return false;
        health = http_get(f.metrics_port, "/healthz");
        return health.status == 503 && metric(f.metrics_port, up) == 0;
      },
      seconds(30)))
      << health.body << d->log();
  EXPECT_NE(health.body.find("queue crashy"), std::string::npos) << health.body;
  EXPECT_NE(health.body.find("no pool process is up"), std::string::npos) << health.body;
  EXPECT_NE(health.body.find("exit"), std::string::npos) << "the reason: " << health.body;
  EXPECT_EQ(metric(f.metrics_port, up), 0);

  // Only the jobs the first three processes held when they died count an
  // attempt; the crash loop's processes get none.
  QueueStats s = stats_of(queue);
  EXPECT_EQ(s.dead, 0) << d->log();
  EXPECT_LE(s.counters["retried"], 3) << d->log();
  EXPECT_EQ(s.pending + s.active + s.delayed, kJobs);
  for (const std::string& id : ids) EXPECT_LE(std::stoi(row(queue, id)["attempts"]), 1) << id;
  EXPECT_TRUE(d->wait_log("claiming nothing until the handler can start", seconds(1))) << d->log();

  // The fix is deployed: the next replacement comes up, and claiming resumes.
  ::unlink(broken.c_str());
  ASSERT_TRUE(all_completed(x, queue, kJobs, seconds(60))) << d->log();
  EXPECT_EQ(stats_of(queue).dead, 0);
  EXPECT_EQ(metric(f.metrics_port, up), 1);
  EXPECT_EQ(http_get(f.metrics_port, "/healthz").status, 200);
  EXPECT_TRUE(d->wait_log("the handler is up again", seconds(1))) << d->log();
  report_figures("crash-looping pool",
                 "jobs=" + std::to_string(kJobs) +
                     " dead=0 retried=" + std::to_string(stats_of(queue).counters["retried"]) +
                     " released_uncounted=" + std::to_string(stats_of(queue).counters["released"]));
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0) << d->log();
}

}  // namespace
}  // namespace echomq::test
