// kill -9 of one of two daemons in the middle of a run: the jobs it held
// are reaped after their lease and run again by the survivor. Nothing is
// lost, and only jobs the victim was holding at the instant it died run
// twice, so at most its concurrency.
#include <memory>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class Kill9 : public Faults {};

TEST_F(Kill9, OneOfTwoDaemonsKilledDuringFiveThousandJobsLosesNothing) {
  const int kJobs = 5000, kConcurrency = 8;
  const std::int64_t kLeaseMs = 2000;
  auto config = [&](const std::string& name) {
    return fault_config_head(server.url(), {}) +
           ledger_queue("crash", kConcurrency, kLeaseMs, ledger_path(), name, ":");
  };
  std::vector<std::string> ids = put_many("crash", kJobs);
  auto victim = std::make_unique<EmqdProcess>(config("victim"));
  EmqdProcess survivor(config("survivor"));
  ASSERT_TRUE(victim->wait_ready()) << victim->log();
  ASSERT_TRUE(survivor.wait_ready()) << survivor.log();

  // Kill it while both are busy, and only once it has run some jobs itself.
  ASSERT_TRUE(wait_for([&] { return completed("crash") >= kJobs / 5 && ledger_lines_of(ledger_path(), "victim") > 0; },
                       seconds(120)));
  victim->signal(SIGKILL);
  ASSERT_EQ(victim->wait_exit(seconds(5)), 128 + SIGKILL);
  const std::int64_t done_at_kill = completed("crash");

  ASSERT_TRUE(all_completed(x, "crash", kJobs, seconds(240))) << survivor.log();
  LedgerCounts c = expect_all_completed(x, "crash", ids, ledger_path());
  EXPECT_LE(c.rerun(), static_cast<std::size_t>(kConcurrency)) << "more jobs ran twice than the victim could hold";
  for (const auto& [id, runs] : c.runs) EXPECT_LE(runs, 2) << id;
  QueueStats s = stats_of("crash");
  EXPECT_EQ(s.counters["retried"], 0);
  EXPECT_LE(s.counters["reaped"], kConcurrency) << "only the victim's leases should have expired";
  report_figures("kill -9 of one of two daemons",
                 "jobs=" + std::to_string(kJobs) + " completed_at_kill=" + std::to_string(done_at_kill) +
                     " ran_twice=" + std::to_string(c.rerun()) + " extra_runs=" +
                     std::to_string(c.lines - c.distinct()) + " reaped=" + std::to_string(s.counters["reaped"]) +
                     " bound=" + std::to_string(kConcurrency) + " (victim's concurrency)");
  survivor.signal(SIGTERM);
  EXPECT_EQ(survivor.wait_exit(seconds(15)), 0) << survivor.log();
}

}  // namespace
}  // namespace echomq::test
