// The metrics endpoint put together (HTTP server, queue sampler, health)
// against a real valkey-server and a real claim loop, scraped over a real
// socket; and the scrape held to promtool's rules.
#include "endpoints/metrics_endpoint.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "claim_loop.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "http_client.h"
#include "ops_files.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::http_get;

class Done : public Handler {
 public:
  Outcome run(const Job&, const StopToken&) override { return {Outcome::Verdict::Complete, "ok", ""}; }
};

Config config_for(const test::ValkeyServer& server, const std::vector<std::string>& queues) {
  Config c;
  c.valkey.url = server.url();
  c.valkey.connect_timeout_ms = 500;
  c.valkey.command_timeout_ms = 500;
  c.metrics.listen = "127.0.0.1:0";
  for (const std::string& q : queues) {
    QueueConfig qc;
    qc.name = q;
    c.queues.push_back(qc);
  }
  return c;
}

ConnectionOptions options_of(const Config& c) {
  ConnectionOptions o = parse_url(c.valkey.url);
  o.connect_timeout = milliseconds(c.valkey.connect_timeout_ms);
  o.command_timeout = milliseconds(c.valkey.command_timeout_ms);
  return o;
}

bool healthz_is(int port, int status, const std::string& body_part) {
  test::HttpAnswer a = http_get(port, "/healthz");
  return a.status == status && a.body.find(body_part) != std::string::npos;
}

TEST(MetricsEndpoint, ATakenPortNamesMetricsListenAndHowToTurnTheEndpointOff) {
  test::ValkeyServer server;
  Config first_config = config_for(server, {"mail"});
  Metrics metrics({"mail"}, "test");
  MetricsEndpoint first(first_config, options_of(first_config), metrics);
  Config config = config_for(server, {"mail"});
  config.metrics.listen = "127.0.0.1:" + std::to_string(first.port());
  try {
    MetricsEndpoint second(config, options_of(config), metrics);
    FAIL() << "two endpoints on one port";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("metrics.listen '" + config.metrics.listen + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
    EXPECT_NE(what.find("set metrics.listen to \"\" to turn the endpoint off"), std::string::npos) << what;
  }
}

TEST(MetricsEndpoint, HealthFollowsTheServerAndTheLoops) {
  test::ValkeyServer server;
  const Config config = config_for(server, {"mail"});
  Metrics metrics({"mail"}, "test");
  MetricsEndpoint endpoint(config, options_of(config), metrics);
  ASSERT_GT(endpoint.port(), 0);

  // Serving before the loops run: not healthy yet, and says so.
  test::HttpAnswer starting = http_get(endpoint.port(), "/healthz");
  EXPECT_EQ(starting.status, 503);
  EXPECT_EQ(starting.body, "starting: waiting for the server\n");
  EXPECT_TRUE(endpoint.liveness().healthy) << "the watchdog is not starved during startup";

  Done handler;
  ClaimLoop loop(config.queues[0], options_of(config), handler, metrics);
  loop.start();
  endpoint.watch({&loop});
  ASSERT_TRUE(test::wait_for([&] { return healthz_is(endpoint.port(), 200, "ok"); }, seconds(5)));
  EXPECT_EQ(http_get(endpoint.port(), "/healthz").body, "ok\n");

  server.stop();
  EXPECT_TRUE(
      test::wait_for([&] { return healthz_is(endpoint.port(), 503, "the server does not answer"); }, seconds(5)));
  EXPECT_TRUE(endpoint.liveness().healthy) << "an outage alone keeps the watchdog fed";
  EXPECT_NE(http_get(endpoint.port(), "/metrics").body.find("\nemq_valkey_up 0\n"), std::string::npos);

  server.start();
  EXPECT_TRUE(test::wait_for([&] { return healthz_is(endpoint.port(), 200, "ok"); }, seconds(10)))
      << http_get(endpoint.port(), "/healthz").body;

  loop.request_stop(milliseconds(0));
  loop.join();
  // A stopped loop shows after its allowance (5 s + poll_max_ms + one
  // server call); the check itself is the unit tests' (healthz_test.cpp).
}

TEST(MetricsEndpoint, ScrapeShowsTheServerReadGauges) {
  test::ValkeyServer server;
  const Config config = config_for(server, {"mail", "thumbs"});
  Executor x(server.options());
  for (int i = 0; i < 3; ++i) enqueue(x, QueueKeys("mail"), mint_job_id(), "hi");
  Metrics metrics({"mail", "thumbs"}, "test");
  MetricsEndpoint endpoint(config, options_of(config), metrics);

  ASSERT_TRUE(test::wait_for(
      [&] {
        return http_get(endpoint.port(), "/metrics")
                   .body.find("emq_queue_jobs{queue=\"mail\",state=\"pending\"} 3\n") != std::string::npos;
      },
      seconds(5)));
  test::HttpAnswer a = http_get(endpoint.port(), "/metrics");
  EXPECT_EQ(a.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(a.body.find("emq_queue_jobs{queue=\"thumbs\",state=\"pending\"} 0\n"), std::string::npos);
  EXPECT_NE(a.body.find("\nemq_valkey_up 1\n"), std::string::npos);
  EXPECT_NE(a.body.find("emq_build_info{version=\"test\"} 1\n"), std::string::npos);
}

TEST(MetricsEndpoint, AnEmptyListenTurnsTheEndpointOff) {
  test::ValkeyServer server;
  Config config = config_for(server, {"mail"});
  config.metrics.listen = "";
  Metrics metrics({"mail"}, "test");
  MetricsEndpoint endpoint(config, options_of(config), metrics);
  EXPECT_EQ(endpoint.port(), 0);
  EXPECT_TRUE(endpoint.liveness().healthy) << "the watchdog still works without the endpoint";
}

// Every family of DESIGN.md's table, with its type, and those only
// docs/operations.md lists: emq_handler_up (issue 11: a queue whose handler
// cannot start), the flow families, and emq_valkey_node_up (a cluster's).
const std::map<std::string, std::string> kFamilies = {
    {"emq_jobs_claimed_total", "counter"},
    {"emq_jobs_completed_total", "counter"},
    {"emq_jobs_failed_total", "counter"},
    {"emq_jobs_lease_lost_total", "counter"},
    {"emq_jobs_reaped_total", "counter"},
    {"emq_jobs_released_total", "counter"},
    {"emq_jobs_in_flight", "gauge"},
    {"emq_handler_duration_seconds", "histogram"},
    {"emq_queue_jobs", "gauge"},
    {"emq_queue_latency_seconds", "gauge"},
    {"emq_job_wait_seconds", "histogram"},
    {"emq_queue_concurrency", "gauge"},
    {"emq_handler_restarts_total", "counter"},
    {"emq_valkey_up", "gauge"},
    {"emq_valkey_errors_total", "counter"},
    {"emq_valkey_script_loads_total", "counter"},
    {"emq_build_info", "gauge"},
    {"emq_handler_up", "gauge"},
    {"emq_flow_children_done_total", "counter"},
    {"emq_flow_orphans", "gauge"},
    {"emq_queue_limited_total", "counter"},
    {"emq_schedule_fires_total", "counter"},
    {"emq_schedule_missed_total", "counter"},
    {"emq_schedule_next_fire_timestamp_seconds", "gauge"},
    {"emq_valkey_node_up", "gauge"},
    {"emq_daemon_state", "gauge"},
    {"emq_daemons", "gauge"},
    {"emq_daemons_stopped_beating", "gauge"},
    {"emq_queue_paused", "gauge"},
    {"emq_events_written_total", "counter"},
    {"emq_unique_duplicates_total", "counter"},
    {"emq_trace_spans_dropped_total", "counter"},
    {"emq_groups", "gauge"},
    {"emq_group_jobs", "gauge"},
};

// A scrape with something in every family, fetched over the socket.
std::string busy_scrape(Metrics& metrics) {
  QueueMetrics& m = metrics.queue("mail");
  m.claimed->Increment(3);
  m.failed_dead->Increment();
  m.handler_duration->Observe(0.2);
  m.job_wait->Observe(1.5);
  m.in_flight->Set(2);
  metrics.on_error(ErrorKind::Timeout);
  metrics.on_script_loads(12);
  // A schedule's series and a cluster node's appear only once made.
  ScheduleMetrics nightly = metrics.schedule("mail", "nightly");
  nightly.enqueued->Increment();
  nightly.missed->Increment(2);
  nightly.next_fire->Set(1796443200);
  metrics.set_valkey_node_up("127.0.0.1:7000", true);
  metrics.set_groups("mail", 1, {{"acme", 2, 1}});
  HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  p.routes["/metrics"] = [&] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape(), {}};
  };
  HttpServer server(std::move(p));
  server.start();
  return http_get(server.port(), "/metrics").body;
}

TEST(MetricsScrape, EveryFamilyOfTheDesignIsThereWithItsType) {
  Metrics metrics({"mail", "thumbs"}, "0.1.0");
  const std::string text = busy_scrape(metrics);
  for (const auto& [name, type] : kFamilies) {
    EXPECT_NE(text.find("# TYPE " + name + " " + type + "\n"), std::string::npos) << name << " " << type;
    EXPECT_NE(text.find("# HELP " + name + " "), std::string::npos) << name;
  }
  std::set<std::string> families;
  const std::regex type_line("# TYPE (\\S+) ");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), type_line); it != std::sregex_iterator(); ++it) {
    families.insert((*it)[1]);
  }
  EXPECT_EQ(families.size(), kFamilies.size()) << "no family beyond the design's";
}

TEST(MetricsScrape, PromtoolFindsNoProblem) {
  ASSERT_TOOL_INSTALLED("promtool", "prometheus");
  Metrics metrics({"mail", "thumbs"}, "0.1.0");
  const std::string text = busy_scrape(metrics);
  test::RunResult r = test::run_tool("promtool", {"check", "metrics"}, text);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out + r.err, "") << "promtool's lint has something to say";

  // And promtool does speak up on a bad exposition: the check can fail.
  test::RunResult bad = test::run_tool("promtool", {"check", "metrics"}, "# TYPE emq_x counter\nemq_x 1\n");
  EXPECT_NE(bad.out + bad.err, "");
}

}  // namespace
}  // namespace echomq::daemon
