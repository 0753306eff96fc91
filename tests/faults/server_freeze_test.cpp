// The server stops answering (SIGSTOP) for longer than the command timeout
// and the lease, then resumes (SIGCONT). Calls time out, the daemons back
// off and reconnect. Time passes on the server's clock meanwhile, so leases
// held across the freeze may have expired: those jobs are reaped and run
// again, and each such re-run shows as a lost lease. Nothing is lost.
#include "fault_fixture.h"

namespace echomq::test {
namespace {

class ServerFreeze : public Faults {};

TEST_F(ServerFreeze, FrozenPastTheLeaseThenThawedLosesNothingAndCountsEveryRerun) {
  const int kJobs = 600, kConcurrency = 4;
  const std::int64_t kLeaseMs = 1500;
  const int port_a = free_loopback_port();
  const int port_b = free_loopback_port();
  auto config = [&](const std::string& name, int port) {
    FaultSettings f;
    f.metrics_port = port;
    f.connect_timeout_ms = 500;
    f.command_timeout_ms = 500;
    return fault_config_head(server.url(), f) +
           ledger_queue("frozen", kConcurrency, kLeaseMs, ledger_path(), name, "sleep 0.2");
  };
  std::vector<std::string> ids = put_many("frozen", kJobs);
  EmqdProcess a(config("a", port_a));
  EmqdProcess b(config("b", port_b));
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  ASSERT_TRUE(wait_for([&] { return completed("frozen") >= 40; }, seconds(60)));

  server.freeze();
  // The freeze itself: twice the lease, so every lease held now expires.
  std::this_thread::sleep_for(milliseconds(2 * kLeaseMs));
  const bool down_a = metric(port_a, "emq_valkey_up") == 0;
  const bool down_b = metric(port_b, "emq_valkey_up") == 0;
  server.thaw();

  ASSERT_TRUE(all_completed(x, "frozen", kJobs, seconds(180))) << a.log() << b.log();
  LedgerCounts c = expect_all_completed(x, "frozen", ids, ledger_path());
  EXPECT_TRUE(down_a && down_b) << "both daemons should have seen the server stop answering";
  EXPECT_TRUE(wait_for([&] { return metric(port_a, "emq_valkey_up") == 1 && metric(port_b, "emq_valkey_up") == 1; },
                       seconds(10)))
      << "both should report the server back";

  // Every job that ran twice had its first lease lost, and said so.
  const double lost = metric(port_a, "emq_jobs_lease_lost_total{queue=\"frozen\"}") +
                      metric(port_b, "emq_jobs_lease_lost_total{queue=\"frozen\"}");
  std::set<std::string> logged = lease_lost_ids(a.log());
  for (const std::string& id : lease_lost_ids(b.log())) logged.insert(id);
  std::size_t unexplained = 0;
  for (const auto& [id, runs] : c.runs) {
    if (runs > 1 && logged.count(id) == 0) ++unexplained;
  }
  EXPECT_EQ(unexplained, 0u) << "jobs that ran again without a lost lease logged";
  EXPECT_GE(lost, static_cast<double>(c.rerun()));
  EXPECT_LE(c.rerun(), static_cast<std::size_t>(2 * kConcurrency)) << "only leases held across the freeze expire";
  QueueStats s = stats_of("frozen");
  EXPECT_GE(s.counters["reaped"], static_cast<std::int64_t>(c.rerun())) << "a re-run comes from a reap";
  EXPECT_EQ(s.counters["dead"], 0);
  report_figures("Valkey frozen 3 s (command timeout 0.5 s, lease 1.5 s)",
                 "jobs=" + std::to_string(kJobs) + " ran_twice=" + std::to_string(c.rerun()) +
                     " bound=" + std::to_string(2 * kConcurrency) + " (jobs in flight) reaped=" +
                     std::to_string(s.counters["reaped"]) + " lease_lost_total=" + std::to_string(int(lost)));
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(seconds(15)), 0) << a.log();
  EXPECT_EQ(b.wait_exit(seconds(15)), 0) << b.log();
}

}  // namespace
}  // namespace echomq::test
