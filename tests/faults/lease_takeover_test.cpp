// A lease lost while its handler still runs, and the job claimed again at
// once by the same daemon (it has a free slot): two runs of one job id in
// one daemon, with different lease epochs. Each must keep its own books:
// the old run's discarded answer must not end the new run's renewals, or
// the new run loses its lease too, and a job longer than its lease never
// completes.
#include <fstream>

#include "fault_fixture.h"
#include "take_lease.h"

namespace echomq::test {
namespace {

class LeaseTakeover : public Faults {};

TEST_F(LeaseTakeover, AJobReclaimedByTheSameDaemonWhileItsOldRunGoesOnCompletesOnce) {
  const std::int64_t kLeaseMs = 1500;
  const int port = free_loopback_port();
  FaultSettings f;
  f.metrics_port = port;
  // 2.5 s of work: longer than the lease, so the second run lives on renewals.
  EmqdProcess d(fault_config_head(server.url(), f) +
                ledger_queue("takeover", 2, kLeaseMs, ledger_path(), "a", "sleep 2.5"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string id = put("takeover", "x");
  ASSERT_TRUE(wait_for([&] { return read_ledger(ledger_path()).lines == 1; }, seconds(10)));

  // Another worker's reaper takes the lease while the run goes on; the
  // daemon's free slot claims the job straight back.
  ASSERT_EQ(take_lease(x, QueueKeys("takeover"), id), 1) << "reap's requeued";
  ASSERT_TRUE(wait_for([&] { return read_ledger(ledger_path()).lines == 2; }, seconds(10))) << d.log();
  EXPECT_EQ(row("takeover", id)["lease_epoch"], "2");

  // Both runs end; the second completes the job on its own renewed lease.
  ASSERT_TRUE(all_completed(x, "takeover", 1, seconds(20))) << d.log();
  std::this_thread::sleep_for(milliseconds(2 * kLeaseMs));  // a third run would have started by now
  LedgerCounts c = read_ledger(ledger_path());
  EXPECT_EQ(c.lines, 2u) << "the job should run twice (the stolen lease, then its own), not more";
  QueueStats s = stats_of("takeover");
  EXPECT_EQ(s.counters["completed"], 1);
  EXPECT_EQ(s.counters["reaped"], 1) << "only the test's own reap: the second run's lease was kept renewed";
  EXPECT_EQ(s.counters["claimed"], 2);
  EXPECT_EQ(metric(port, "emq_jobs_lease_lost_total{queue=\"takeover\"}"), 1);
  report_figures("lease lost and reclaimed by the same daemon mid-run",
                 "jobs=1 runs=" + std::to_string(c.lines) + " bound=2 reaped=" + std::to_string(s.counters["reaped"]));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
