// SCRIPT FLUSH while jobs run, again and again (a failover to a fresh
// replica, or an operator, empties the script cache): each EVALSHA that
// meets NOSCRIPT loads the scripts once and runs again. No job notices.
#include "fault_fixture.h"

namespace echomq::test {
namespace {

class ScriptFlush : public Faults {};

TEST_F(ScriptFlush, RepeatedFlushesMidRunFailNoJob) {
  const int kJobs = 600, kFlushes = 5;
  const int port = free_loopback_port();
  FaultSettings f;
  f.metrics_port = port;
  EmqdProcess d(fault_config_head(server.url(), f) + ledger_queue("flush", 4, 30000, ledger_path(), "a", "sleep 0.01"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const double loads_before = metric(port, "emq_valkey_script_loads_total");
  std::vector<std::string> ids = put_many("flush", kJobs);

  for (int i = 1; i <= kFlushes; ++i) {
    ASSERT_TRUE(wait_for([&] { return completed("flush") >= i * kJobs / (kFlushes + 2); }, seconds(60))) << d.log();
    ASSERT_EQ(x.command({"SCRIPT", "FLUSH"}).str, "OK");
  }
  ASSERT_TRUE(all_completed(x, "flush", kJobs, seconds(120))) << d.log();
  LedgerCounts c = expect_all_completed(x, "flush", ids, ledger_path());
  EXPECT_EQ(c.lines, c.distinct()) << "a reload must not run any job twice";
  QueueStats s = stats_of("flush");
  EXPECT_EQ(s.counters["retried"], 0);
  EXPECT_EQ(s.counters["dead"], 0);
  const double loads_after = metric(port, "emq_valkey_script_loads_total");
  // The claim loop meets NOSCRIPT after every flush; the renewer and the
  // reaper as well when they run before it reloads on their connection.
  EXPECT_GE(loads_after - loads_before, 12.0 * kFlushes) << "one reload of the 12 scripts per flush at least";
  EXPECT_EQ(metric(port, "emq_jobs_lease_lost_total{queue=\"flush\"}"), 0);
  report_figures("SCRIPT FLUSH x" + std::to_string(kFlushes) + " mid-run",
                 "jobs=" + std::to_string(kJobs) + " ran_twice=" + std::to_string(c.rerun()) +
                     " bound=0 retried=0 dead=0 script_loads " + std::to_string(int(loads_before)) + "->" +
                     std::to_string(int(loads_after)));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
