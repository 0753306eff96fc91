// The built emqd, run as systemd would run it (NOTIFY_SOCKET, WATCHDOG_USEC)
// against a real server with a real exec handler, and watched the way an
// operator watches it: /metrics, /healthz, the notify datagrams.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "http_client.h"
#include "http/http_server.h"
#include "notify_socket.h"
#include "ops_files.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A loopback port free a moment ago (the config refuses port 0). The
// kernel hands out ephemeral ports in turn, so it stays free long enough.
int free_port() {
  daemon::HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  return daemon::HttpServer(std::move(p)).port();
}

std::string config_for(const ValkeyServer& server, int metrics_port) {
  return "valkey:\n  url: " + server.url() +
         "\n  connect_timeout_ms: 500\n  command_timeout_ms: 1000\n"
         "metrics:\n  listen: 127.0.0.1:" +
         std::to_string(metrics_port) +
         "\n"
         "log:\n  level: info\n"
         "shutdown:\n  drain_timeout_s: 5\n"
         "queues:\n"
         "  - name: live\n    concurrency: 2\n    handler:\n      type: exec\n"
         "      command: [\"" EMQ_TEST_HANDLERS "/ok.sh\"]\n";
}

int metrics_port(const EmqdProcess& d) {
  std::smatch m;
  const std::string log = d.log();
  if (!std::regex_search(log, m, std::regex(R"(metrics endpoint on \S+ \(port (\d+)\))"))) return 0;
  return std::stoi(m[1]);
}

// Datagrams until one starts with `prefix`; nullopt past the deadline.
std::optional<std::string> await(NotifySocket& s, const std::string& prefix, milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
    std::optional<std::string> d = s.next(left);
    if (d && d->rfind(prefix, 0) == 0) return d;
  }
  return std::nullopt;
}

TEST(EmqdLive, ScrapedAndWatchedThroughARun) {
  ValkeyServer server;
  NotifySocket systemd;
  EmqdProcess d(config_for(server, free_port()), {}, {systemd.env(), "WATCHDOG_USEC=2000000"});

  std::optional<std::string> ready = await(systemd, "READY=1", seconds(20));
  ASSERT_TRUE(ready) << d.log();
  EXPECT_EQ(*ready, "READY=1\nSTATUS=1 queues, 0 jobs in flight");
  const int port = metrics_port(d);
  ASSERT_GT(port, 0) << d.log();
  EXPECT_TRUE(wait_for([&] { return http_get(port, "/healthz").status == 200; }, seconds(5)))
      << http_get(port, "/healthz").body;
  EXPECT_TRUE(await(systemd, "WATCHDOG=1", seconds(5))) << "pings every WATCHDOG_USEC/2 while healthy";

  Executor x(server.options());
  for (int i = 0; i < 5; ++i) enqueue(x, QueueKeys("live"), mint_job_id(), "job " + std::to_string(i));
  EXPECT_TRUE(wait_for([&] { return scrape_has(port, "emq_jobs_completed_total{queue=\"live\"} 5"); }, seconds(20)))
      << http_get(port, "/metrics").body << d.log();
  EXPECT_TRUE(
      wait_for([&] { return scrape_has(port, "emq_queue_jobs{queue=\"live\",state=\"pending\"} 0"); }, seconds(5)));
  EXPECT_TRUE(scrape_has(port, "emq_queue_concurrency{queue=\"live\"} 2"));
  EXPECT_TRUE(scrape_has(port, "emq_handler_duration_seconds_count{queue=\"live\"} 5"));
  // The queue keeps events (the default): a claim entry and a completion
  // entry per job, appended by this daemon.
  EXPECT_TRUE(scrape_has(port, "emq_events_written_total{queue=\"live\"} 10")) << http_get(port, "/metrics").body;

  ASSERT_TOOL_INSTALLED("promtool", "prometheus");
  RunResult lint = run_tool("promtool", {"check", "metrics"}, http_get(port, "/metrics").body);
  EXPECT_EQ(lint.code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "");

  // The server goes away: /healthz says so, the watchdog keeps being fed
  // (an outage is ridden out, not a reason for systemd to kill us).
  server.stop();
  EXPECT_TRUE(wait_for(
      [&] {
        HttpAnswer a = http_get(port, "/healthz");
        return a.status == 503 && a.body == "the server does not answer\n";
      },
      seconds(10)))
      << http_get(port, "/healthz").body;
  EXPECT_TRUE(scrape_has(port, "emq_valkey_up 0"));
  while (systemd.next(milliseconds(0))) {
  }
  EXPECT_TRUE(await(systemd, "WATCHDOG=1", seconds(5))) << d.log();

  server.start();
  EXPECT_TRUE(wait_for([&] { return http_get(port, "/healthz").status == 200; }, seconds(15))) << d.log();

  d.signal(SIGTERM);
  EXPECT_TRUE(await(systemd, "STOPPING=1", seconds(5))) << d.log();
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_THROW(Client c(port), std::runtime_error) << "the endpoint is closed after a stop";
}

TEST(EmqdLive, ATakenMetricsPortStopsTheStartWithAClearError) {
  ValkeyServer server;
  daemon::HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  daemon::HttpServer squatter(std::move(p));
  EmqdProcess d(config_for(server, squatter.port()));
  EXPECT_EQ(d.wait_exit(seconds(20)), 1) << d.log();
  EXPECT_NE(d.log().find("cannot listen"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("set metrics.listen to \"\""), std::string::npos) << d.log();
}

}  // namespace
}  // namespace echomq::test
