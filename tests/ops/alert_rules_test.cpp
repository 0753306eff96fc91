// docs/operations.md's alert rules, taken from the page as written: they
// load in Prometheus (`promtool check rules`), and the ones issue 30
// mended fire when they should and stay quiet when they should
// (`promtool test rules` on made-up series).
#include <gtest/gtest.h>

#include "ops_files.h"

namespace echomq::test {
namespace {

std::string rules_from_the_page() {
  const std::string page = read_text(source_dir() / "docs" / "operations.md");
  const std::size_t heading = page.find("\n### What to alert on\n");
  if (heading == std::string::npos) throw std::runtime_error("docs/operations.md has no '### What to alert on'");
  const std::size_t open = page.find("\n```yaml\n", heading);
  const std::size_t close = page.find("\n```\n", open + 1);
  if (open == std::string::npos || close == std::string::npos) throw std::runtime_error("no ```yaml block under it");
  return page.substr(open + 9, close + 1 - (open + 9));
}

#define REQUIRE_PROMTOOL() \
  ASSERT_FALSE(find_program("promtool").empty()) << "promtool is not installed: run scripts/install-deps.sh (prometheus)"

TEST(AlertRules, TheyLoadInPrometheus) {
  REQUIRE_PROMTOOL();
  TempDir dir;
  write_text(dir.path() / "rules.yml", rules_from_the_page());
  RunResult r = run_tool("promtool", {"check", "rules", (dir.path() / "rules.yml").string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// One series a minute; `values` in promtool's expanding notation.
const char* kCases = R"(rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  # A job reaped past max_attempts goes dead without a failed attempt.
  - interval: 1m
    input_series:
      - series: 'emq_jobs_failed_total{queue="q",outcome="dead",instance="a"}'
        values: '0x10'
      - series: 'emq_jobs_reaped_total{queue="q",outcome="dead",instance="a"}'
        values: '0 0 0 1 1 1 1 1 1 1 1'
    alert_rule_test:
      - eval_time: 5m
        alertname: EchoMQJobsDying
        exp_alerts:
          - exp_labels: { queue: q }
            exp_annotations: { summary: "queue q: jobs went to the dead set; see `emq dead list q`" }
  # A handler's permanent failure, as before.
  - interval: 1m
    input_series:
      - series: 'emq_jobs_failed_total{queue="q",outcome="dead",instance="a"}'
        values: '0 0 0 1 1 1 1 1 1 1 1'
      - series: 'emq_jobs_reaped_total{queue="q",outcome="dead",instance="a"}'
        values: '0x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: EchoMQJobsDying
        exp_alerts:
          - exp_labels: { queue: q }
            exp_annotations: { summary: "queue q: jobs went to the dead set; see `emq dead list q`" }
  # Two daemons deployed (each: valkey_up 0 then 1, 91 script loads): quiet.
  - interval: 1m
    input_series:
      - series: 'emq_valkey_up{instance="a"}'
        values: '0 1x60'
      - series: 'emq_valkey_up{instance="b"}'
        values: '_x10 0 1x50'
      - series: 'emq_valkey_script_loads_total{instance="a"}'
        values: '0 91x60'
      - series: 'emq_valkey_script_loads_total{instance="b"}'
        values: '_x10 0 91x50'
    alert_rule_test:
      - eval_time: 60m
        alertname: EchoMQServerRestarting
        exp_alerts: []
  # The server lost three times in an hour: fires.
  - interval: 1m
    input_series:
      - series: 'emq_valkey_up{instance="a"}'
        values: '1x10 0 1x10 0 1x10 0 1x10'
    alert_rule_test:
      - eval_time: 40m
        alertname: EchoMQServerRestarting
        exp_alerts:
          - exp_labels: { instance: a }
            exp_annotations: { summary: "emqd on a lost the server more than twice in an hour: restarts, failovers or a flaky network" }
  # The dead set's size, read by every daemon: over the threshold for an hour.
  - interval: 1m
    input_series:
      - series: 'emq_queue_jobs{queue="q",state="dead",instance="a"}'
        values: '2000x70'
      - series: 'emq_queue_jobs{queue="q",state="dead",instance="b"}'
        values: '2000x70'
    alert_rule_test:
      - eval_time: 30m
        alertname: EchoMQDeadSetLarge
        exp_alerts: []
      - eval_time: 65m
        alertname: EchoMQDeadSetLarge
        exp_alerts:
          - exp_labels: { queue: q }
            exp_annotations: { summary: "queue q: 2000 dead jobs; `emq dead list q`, then `emq dead retry` or `emq dead delete`" }
)";

TEST(AlertRules, TheMendedRulesFireWhenTheyShould) {
  REQUIRE_PROMTOOL();
  TempDir dir;
  write_text(dir.path() / "rules.yml", rules_from_the_page());
  write_text(dir.path() / "cases.yml", kCases);
  RunResult r = run_tool("promtool", {"test", "rules", (dir.path() / "cases.yml").string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace echomq::test
