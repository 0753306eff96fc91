// docs/operations.md's alert rules, taken from the page as written: they
// load in Prometheus (`promtool check rules`), and the ones issue 30
// mended (and the fleet's, issue 40) fire when they should and stay quiet
// when they should (`promtool test rules` on made-up series).
#include <gtest/gtest.h>

#include "doc_text.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

std::string rules_from_the_page() {
  return fenced_block((source_dir() / "docs" / "operations.md").string(), "### What to alert on", "yaml");
}

#define REQUIRE_PROMTOOL() ASSERT_TOOL_INSTALLED("promtool", "prometheus")

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
  # Queue r: a job reaped past max_attempts goes dead without a failed
  # attempt; queue f: a handler's permanent failure, as before.
  - interval: 1m
    input_series:
      - series: 'emq_jobs_failed_total{queue="r",outcome="dead",instance="a"}'
        values: '0x10'
      - series: 'emq_jobs_reaped_total{queue="r",outcome="dead",instance="a"}'
        values: '0 0 0 1 1 1 1 1 1 1 1'
      - series: 'emq_jobs_failed_total{queue="f",outcome="dead",instance="a"}'
        values: '0 0 0 1 1 1 1 1 1 1 1'
      - series: 'emq_jobs_reaped_total{queue="f",outcome="dead",instance="a"}'
        values: '0x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: EchoMQJobsDying
        exp_alerts:
          - exp_labels: { queue: r }
            exp_annotations: { summary: "queue r: jobs went to the dead set; see `emq dead list r`" }
          - exp_labels: { queue: f }
            exp_annotations: { summary: "queue f: jobs went to the dead set; see `emq dead list f`" }
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
  # A daemon killed: the two left see its ghost for the hour it stays; a
  # clean stop leaves none and is quiet.
  - interval: 1m
    input_series:
      - series: 'emq_daemons_stopped_beating{instance="a"}'
        values: '0x10 1x60 0x10'
      - series: 'emq_daemons_stopped_beating{instance="b"}'
        values: '0x10 1x60 0x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: EchoMQDaemonStoppedBeating
        exp_alerts: []
      - eval_time: 20m
        alertname: EchoMQDaemonStoppedBeating
        exp_alerts:
          - exp_annotations: { summary: "1 emqd stopped beating without a clean stop in the last hour; `emq daemons` says which are left" }
      - eval_time: 75m
        alertname: EchoMQDaemonStoppedBeating
        exp_alerts: []
  # Queue p paused a day and more (every daemon reads it); queue r paused
  # for an hour only: only p fires. Scraped each minute: a series sampled
  # less often than the 5 m lookback goes stale between samples.
  - interval: 1m
    input_series:
      - series: 'emq_queue_paused{queue="p",instance="a"}'
        values: '1x1600'
      - series: 'emq_queue_paused{queue="p",instance="b"}'
        values: '1x1600'
      - series: 'emq_queue_paused{queue="r",instance="a"}'
        values: '0x600 1x60 0x940'
    alert_rule_test:
      - eval_time: 20h
        alertname: EchoMQQueuePausedForADay
        exp_alerts: []
      - eval_time: 25h
        alertname: EchoMQQueuePausedForADay
        exp_alerts:
          - exp_labels: { queue: p }
            exp_annotations: { summary: "queue p has been paused for over a day; `emq stats p` says who and why" }
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
