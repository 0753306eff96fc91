// The server crashes (kill -9) and comes back from its append-only file in
// the middle of a run. Both daemons ride it out: they reconnect, load the
// scripts again (the script cache does not survive a restart), settle what
// finished meanwhile, and every job completes.
#include <algorithm>
#include <regex>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class ServerRestart : public Faults {};

TEST_F(ServerRestart, KilledAndRestartedFromItsAofMidRunLosesNothing) {
  // appendfsync always: a write the server acknowledged is on disk, so a
  // crash loses only what no client was told had happened.
  ValkeyServer durable(ValkeyServer::Options{true, {"--appendfsync", "always"}});
  Executor dx(durable.options());
  const int kJobs = 1000, kConcurrency = 4;
  const std::string ledger = durable.dir() + "/ledger.txt";
  std::vector<std::string> ids = put_many(dx, "restart", kJobs);

  const int port_a = free_loopback_port();
  const int port_b = free_loopback_port();
  auto config = [&](const std::string& name, int port) {
    FaultSettings f;
    f.metrics_port = port;
    f.connect_timeout_ms = 500;
    f.command_timeout_ms = 1000;
    return fault_config_head(durable.url(), f) +
           ledger_queue("restart", kConcurrency, 5000, ledger, name, "sleep 0.01");
  };
  EmqdProcess a(config("a", port_a));
  EmqdProcess b(config("b", port_b));
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  const double loads_a = metric(port_a, "emq_valkey_script_loads_total");
  const double loads_b = metric(port_b, "emq_valkey_script_loads_total");
  ASSERT_GT(loads_a, 0) << scrape(port_a);
  ASSERT_GT(loads_b, 0);

  ASSERT_TRUE(wait_for([&] { return stats(dx, QueueKeys("restart")).counters["completed"] >= 200; }, seconds(60)));
  durable.kill9();
  // The outage itself (not a wait for a condition): long enough that every
  // loop notices, short of the 5 s lease.
  std::this_thread::sleep_for(milliseconds(1000));
  durable.start();

  ASSERT_TRUE(all_completed(dx, "restart", kJobs, seconds(120))) << a.log() << b.log();
  LedgerCounts c = expect_all_completed(dx, "restart", ids, ledger);
  EXPECT_LE(c.rerun(), static_cast<std::size_t>(2 * kConcurrency)) << "more re-runs than jobs in flight";
  QueueStats s = stats(dx, QueueKeys("restart"));
  EXPECT_EQ(s.counters["retried"], 0) << "a server outage is no job's failure";

  // Both reconnected and reloaded their scripts; both report the server up.
  double after_a = 0, after_b = 0;
  EXPECT_TRUE(wait_for(
      [&] {
        after_a = metric(port_a, "emq_valkey_script_loads_total");
        after_b = metric(port_b, "emq_valkey_script_loads_total");
        return after_a > loads_a && after_b > loads_b;
      },
      seconds(10)))
      << "script loads a: " << loads_a << " -> " << after_a << ", b: " << loads_b << " -> " << after_b;
  EXPECT_TRUE(wait_for([&] { return metric(port_a, "emq_valkey_up") == 1 && metric(port_b, "emq_valkey_up") == 1; },
                       seconds(10)));
  EXPECT_NE(a.log().find("server trouble"), std::string::npos) << "the outage should show in the log";
  report_figures("Valkey killed and restarted from AOF",
                 "jobs=" + std::to_string(kJobs) + " ran_twice=" + std::to_string(c.rerun()) +
                     " bound=" + std::to_string(2 * kConcurrency) +
                     " (jobs in flight) reaped=" + std::to_string(s.counters["reaped"]) + " script_loads a " +
                     std::to_string(int(loads_a)) + "->" + std::to_string(int(after_a)) + ", b " +
                     std::to_string(int(loads_b)) + "->" + std::to_string(int(after_b)));
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(seconds(15)), 0) << a.log();
  EXPECT_EQ(b.wait_exit(seconds(15)), 0) << b.log();
}

// The reconnect, as the log tells it: one line per attempt of each claim
// loop, each with that attempt's own error and a wait that grows (before,
// each step came twice, the second a stale copy of the first), no
// "Connection refused" once the server is back, and a count when it is over.
TEST_F(ServerRestart, EachReconnectAttemptIsOneLineWithItsOwnError) {
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  f.connect_timeout_ms = 500;
  f.command_timeout_ms = 1000;
  EmqdProcess d(fault_config_head(server.url(), f) + ledger_queue("back", 2, 30000, ledger_path(), "a", "true"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  server.stop();
  std::this_thread::sleep_for(milliseconds(3500));  // the outage itself; backoff reaches 1.6 s
  const std::size_t before_restart = d.log().size();
  server.start();
  Executor fresh(server.options());  // x's connection died with the server
  enqueue(fresh, QueueKeys("back"), mint_job_id(), "after");
  ASSERT_TRUE(wait_for([&] { return stats(fresh, QueueKeys("back")).counters["completed"] == 1; }, seconds(15)))
      << d.log();
  ASSERT_TRUE(d.wait_log("queue=back the server takes calls again, after", seconds(5))) << d.log();

  const std::string log = d.log();
  static const std::regex attempt(R"(queue=back server trouble, \d+ outcomes kept for later, retry in (\d+) ms)");
  std::vector<long> waits;
  for (std::sregex_iterator it(log.begin(), log.end(), attempt), end; it != end; ++it) {
    waits.push_back(std::stol((*it)[1]));
  }
  ASSERT_GE(waits.size(), 3u) << log;
  for (std::size_t i = 1; i < waits.size(); ++i) {
    EXPECT_GT(waits[i], waits[i - 1]) << "attempt " << i << " logged twice, or the wait did not grow:\n" << log;
  }
  const std::string after = log.substr(before_restart);
  EXPECT_EQ(after.find("Connection refused"), std::string::npos) << "a stale error after the server is back:\n"
                                                                 << after;
  EXPECT_LE(std::count(log.begin(), log.end(), '\n'), static_cast<long>(waits.size()) + 30)
      << "the other duties say an outage once, not every second:\n"
      << log;
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
