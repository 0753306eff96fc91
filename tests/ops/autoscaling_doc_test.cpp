// docs/operations.md's "Autoscaling", taken from the page as written: its
// two YAML documents parse as the objects they claim to be; the KEDA
// trigger's query, run by promtool over a real emqd's scrape (as two
// daemons report it), answers the pending depth; the grace period covers
// the preStop's wait and the drain's defaults; a pending set answers LLEN
// with WRONGTYPE, as the page says KEDA's list scaler would meet; and the
// preStop script, run against a real emqd running a job, quiets it and
// waits for the job before it returns.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <regex>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "config/config_schema.h"
#include "doc_text.h"
#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "http_client.h"
#include "ops_files.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string page() { return read_text(source_dir() / "docs/operations.md"); }

std::vector<YAML::Node> documents() {
  return YAML::LoadAll(fenced_block((source_dir() / "docs/operations.md").string(), "## Autoscaling", "yaml"));
}

YAML::Node of_kind(const std::string& kind) {
  for (const YAML::Node& d : documents()) {
    if (d["kind"] && d["kind"].as<std::string>() == kind) return d;
  }
  ADD_FAILURE() << "docs/operations.md, Autoscaling: no " << kind << " in the YAML block";
  return YAML::Node();
}

std::string prestop_script() {
  const YAML::Node deployment = of_kind("Deployment");
  const YAML::Node command =
      deployment["spec"]["template"]["spec"]["containers"][0]["lifecycle"]["preStop"]["exec"]["command"];
  if (!command || command.size() != 3 || command[0].as<std::string>() != "bash") {
    ADD_FAILURE() << "the preStop is no longer [bash, -c, SCRIPT]";
    return "";
  }
  return command[2].as<std::string>();
}

// Replaces every `from` with `to`; fails when there is none.
std::string substitute(std::string text, const std::string& from, const std::string& to) {
  std::size_t n = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()), ++n) {
    text.replace(at, from.size(), to);
  }
  EXPECT_GT(n, 0u) << "the preStop no longer says '" << from << "': update this test with it";
  return text;
}

std::string config_for(const ValkeyServer& server, int metrics_port, const std::string& handler) {
  return "valkey:\n  url: " + server.url() + "\nmetrics:\n  listen: 127.0.0.1:" + std::to_string(metrics_port) +
         "\nqueues:\n  - name: thumbs\n    concurrency: 1\n    keep_completed_s: 60\n    handler:\n"
         "      type: exec\n      command: [\"/bin/sh\", \"-c\", \"" +
         handler + "\"]\n";
}

TEST(AutoscalingDoc, TheScaledObjectScalesTheDeploymentOnOnePrometheusNumber) {
  const YAML::Node scaled = of_kind("ScaledObject");
  const YAML::Node deployment = of_kind("Deployment");
  ASSERT_TRUE(scaled && deployment);
  EXPECT_EQ(scaled["apiVersion"].as<std::string>(), "keda.sh/v1alpha1");
  EXPECT_EQ(scaled["spec"]["scaleTargetRef"]["name"].as<std::string>(),
            deployment["metadata"]["name"].as<std::string>());
  EXPECT_GE(scaled["spec"]["minReplicaCount"].as<int>(), 1) << "the depth comes from emqd: zero pods read none";
  const YAML::Node trigger = scaled["spec"]["triggers"][0];
  EXPECT_EQ(trigger["type"].as<std::string>(), "prometheus");
  EXPECT_GT(std::stod(trigger["metadata"]["threshold"].as<std::string>()), 0);
  EXPECT_FALSE(trigger["metadata"]["serverAddress"].as<std::string>().empty());
}

// The query, over what a real emqd serves: a paused queue holding 7
// pending jobs, scraped as two daemons (instances a and b) report it.
TEST(AutoscalingDoc, TheTriggersQueryAnswersThePendingDepthOverARealScrape) {
  ASSERT_TOOL_INSTALLED("promtool", "prometheus");
  const std::string query = of_kind("ScaledObject")["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  ASSERT_NE(query.find("queue=\"thumbs\""), std::string::npos) << query;

  ValkeyServer server;
  Executor x(server.options());
  const QueueKeys q("thumbs");
  x.command({"HSET", q.meta, "paused", "1"});
  const int port = free_loopback_port();
  EmqdProcess d(config_for(server, port, "cat"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  for (int i = 0; i < 7; ++i) enqueue(x, q, mint_job_id(), "p");
  ASSERT_TRUE(
      wait_for([&] { return scrape_has(port, "emq_queue_jobs{queue=\"thumbs\",state=\"pending\"} 7"); }, seconds(10)))
      << http_get(port, "/metrics").body;
  const std::string scrape = http_get(port, "/metrics").body;

  // Every sample of the scrape, a minute of it, for each of the two.
  std::string series;
  std::istringstream lines(scrape);
  const std::regex sample(R"(^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$)");
  int samples = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, sample)) continue;
    ++samples;
    const std::string labels = m[2].matched ? m[2].str().substr(1, m[2].length() - 2) : "";
    for (const char* instance : {"a", "b"}) {
      series += "      - series: '" + m[1].str() + "{" + labels + (labels.empty() ? "" : ",") + "instance=\"" +
                instance + "\"}'\n        values: '" + m[3].str() + "x2'\n";
    }
  }
  ASSERT_GT(samples, 20) << scrape;
  const std::string cases = "evaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + series +
                            "    promql_expr_test:\n      - expr: '" + query +
                            "'\n        eval_time: 1m\n        exp_samples:\n          - labels: '{}'\n"
                            "            value: 7\n";
  TempDir dir;
  write_text(dir.path() / "cases.yml", cases);
  const RunResult r = run_tool("promtool", {"test", "rules", (dir.path() / "cases.yml").string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err << "\n" << cases.substr(0, 4000);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

TEST(AutoscalingDoc, TheGracePeriodCoversThePreStopsWaitAndTheDrain) {
  const YAML::Node pod = of_kind("Deployment")["spec"]["template"]["spec"];
  const double grace = pod["terminationGracePeriodSeconds"].as<double>();
  std::smatch m;
  const std::string script = prestop_script();
  ASSERT_TRUE(std::regex_search(script, m, std::regex(R"(deadline=\$\(\(SECONDS \+ (\d+)\)\))"))) << script;
  const double wait = std::stod(m[1]);
  const double drain = std::stod(daemon::key_spec(daemon::kTop, "shutdown.drain_timeout_s").fallback);
  const double kill_grace = std::stod(daemon::key_spec(daemon::kDefaults, "kill_grace_s").fallback);
  EXPECT_GE(grace, wait + drain + kill_grace + 5) << "terminationGracePeriodSeconds " << grace << " < the preStop's "
                                                  << wait << " s + the drain's " << drain + kill_grace + 5 << " s";
}

TEST(AutoscalingDoc, APendingSetAnswersLlenWithWrongtypeAsThePageSays) {
  ValkeyServer server;
  Executor x(server.options());
  const QueueKeys q("thumbs");
  enqueue(x, q, mint_job_id(), "p");
  const Reply llen = x.command({"LLEN", q.pending});
  ASSERT_TRUE(llen.is_error());
  EXPECT_NE(page().find("`" + llen.str + "`"), std::string::npos) << "the page should quote: " << llen.str;
  EXPECT_NE(page().find("`" + q.pending + "`"), std::string::npos);
  EXPECT_EQ(x.command({"ZCARD", q.pending}).integer, 1);
}

// The preStop, run as the kubelet would against a real emqd whose one job
// runs until released: emqd goes quiet, the script waits while the job
// runs, and returns once it completed; the SIGTERM after it drains at once.
// Two substitutions, each of which must be found: /proc holds only this
// test's emqd (the script must not signal another process of the host),
// and the metrics port is a free one.
TEST(AutoscalingDoc, ThePreStopQuietsEmqdAndWaitsForItsRunningJob) {
  ValkeyServer server;
  TempDir dir;
  const std::string started = (dir.path() / "started").string(), release = (dir.path() / "release").string();
  const int port = free_loopback_port();
  EmqdProcess d(
      config_for(server, port, "touch " + started + "; while [ ! -e " + release + " ]; do sleep 0.02; done; cat"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  Executor x(server.options());
  const QueueKeys q("thumbs");
  const std::string job = mint_job_id();
  enqueue(x, q, job, "p");
  ASSERT_TRUE(wait_for([&] { return fs::exists(started); }, seconds(20))) << d.log();

  const fs::path proc = dir.path() / "proc";
  fs::create_directories(proc);
  fs::create_directory_symlink("/proc/" + std::to_string(d.pid()), proc / std::to_string(d.pid()));
  std::string script = substitute(prestop_script(), "/proc/", proc.string() + "/");
  script = substitute(script, "9464", std::to_string(port));
  auto prestop = std::async(std::launch::async, [&] { return run_program({"/bin/bash", "-c", script}); });

  ASSERT_TRUE(d.wait_log("going quiet", seconds(10))) << d.log();
  const std::string later = mint_job_id();
  enqueue(x, q, later, "later");
  // It waits while the job runs: not done within a second and a half.
  EXPECT_NE(prestop.wait_for(milliseconds(1500)), std::future_status::ready) << "the preStop did not wait for the job";
  std::ofstream(release) << "go";
  ASSERT_EQ(prestop.wait_for(seconds(20)), std::future_status::ready) << "the preStop still waits after the job ended";
  const RunResult r = prestop.get();
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(x.command({"HGET", q.row(job), "state"}).str, "completed");
  EXPECT_EQ(x.command({"HGET", q.row(later), "state"}).str, "pending") << "a quiet emqd claims nothing";
  EXPECT_TRUE(d.running()) << "quiet keeps emqd up until the SIGTERM";
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
