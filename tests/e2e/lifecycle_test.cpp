// Leases, drains, several daemons and a server that goes away: what emqd
// promises about every job across them.
#include <algorithm>
#include <fstream>
#include <memory>

#include "e2e_fixture.h"

namespace echomq::test {
namespace {

class Lifecycle : public E2E {};

TEST_F(Lifecycle, RenewalKeepsAThreeSecondJobAliveOnAOneSecondLease) {
  EmqdProcess d(config_head(server) + "  - name: long\n    lease_ms: 1000\n    handler:\n      type: exec\n" +
                ledger_handler_yaml(ledger_path(), "a", "sleep 3"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  put("long", "x");
  ASSERT_TRUE(settled("long", 1, seconds(20))) << d.log();
  QueueStats s = stats_of("long");
  EXPECT_EQ(s.counters["completed"], 1);
  EXPECT_EQ(s.counters["reaped"], 0) << "the reaper took a lease that was being renewed";
  EXPECT_EQ(read_ledger(ledger_path()).lines, 1u);
  EXPECT_EQ(d.log().find("lease lost"), std::string::npos) << d.log();
}

TEST_F(Lifecycle, ALostLeaseStopsTheHandlerAndItsAnswerIsDiscarded) {
  const std::string pidfile = server.dir() + "/pid";
  EmqdProcess d(config_head(server) +
                "  - name: stolen\n    lease_ms: 900\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo $$ > " +
                pidfile + "; sleep 30; echo late\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("stolen", "x");
  // The shell creates the file before it writes the pid: wait for the pid.
  pid_t pid = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        std::ifstream(pidfile) >> pid;
        return pid > 0 && stats_of("stolen").active == 1;
      },
      seconds(10)));

  // Another worker's reaper takes the lease: pause so nobody re-claims it,
  // expire the lease, reap.
  QueueKeys q("stolen");
  pause(x, q);
  x.command({"ZADD", q.active, "1", id});
  ReapResult reaped = reap(x, q, 5, 10);
  ASSERT_EQ(reaped.requeued, 1);

  EXPECT_TRUE(d.wait_log("lease lost", seconds(5))) << d.log();
  EXPECT_TRUE(wait_for([&] { return ::kill(pid, 0) != 0; }, seconds(10))) << "the handler still runs";
  auto r = row("stolen", id);
  EXPECT_EQ(r["state"], "pending");
  EXPECT_EQ(r.count("result"), 0u);
  EXPECT_EQ(r["error"], "lease expired");
  EXPECT_EQ(stats_of("stolen").counters["completed"], 0);
}

TEST_F(Lifecycle, TwoDaemonsCompleteTwoThousandJobsExactlyOnce) {
  auto queue_yaml = [&](const std::string& name) {
    return config_head(server) + "  - name: shared\n    concurrency: 8\n    handler:\n      type: exec\n" +
           ledger_handler_yaml(ledger_path(), name, "cat > /dev/null");
  };
  for (int i = 0; i < 2000; ++i) put("shared", std::to_string(i));
  EmqdProcess a(queue_yaml("a"));
  EmqdProcess b(queue_yaml("b"));
  ASSERT_TRUE(settled("shared", 2000, seconds(120))) << a.log() << b.log();
  LedgerCounts c = read_ledger(ledger_path());
  EXPECT_EQ(c.distinct(), 2000u);
  EXPECT_EQ(c.lines, 2000u) << c.rerun() << " jobs ran more than once";
  EXPECT_EQ(stats_of("shared").counters["completed"], 2000);
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(seconds(10)), 0);
  EXPECT_EQ(b.wait_exit(seconds(10)), 0);
}

TEST_F(Lifecycle, KillNineOfOneDaemonLosesNothingAndRerunsAtMostItsConcurrency) {
  const int kJobs = 400, kConcurrency = 4;
  auto queue_yaml = [&](const std::string& name) {
    return config_head(server) + "  - name: crash\n    concurrency: " + std::to_string(kConcurrency) +
           "\n    lease_ms: 1000\n    handler:\n      type: exec\n" +
           ledger_handler_yaml(ledger_path(), name, "sleep 0.02");
  };
  for (int i = 0; i < kJobs; ++i) put("crash", std::to_string(i));
  auto victim = std::make_unique<EmqdProcess>(queue_yaml("victim"));
  EmqdProcess survivor(queue_yaml("survivor"));
  ASSERT_TRUE(wait_for([&] { return completed("crash") >= 60; }, seconds(30)));
  victim->signal(SIGKILL);
  victim->wait_exit(seconds(5));
  ASSERT_TRUE(settled("crash", kJobs, seconds(120))) << survivor.log();
  LedgerCounts c = read_ledger(ledger_path());
  EXPECT_EQ(c.distinct(), static_cast<std::size_t>(kJobs));
  // The kill's cost: jobs the victim was running that ran again. A lease
  // the survivor itself let lapse on a loaded machine reruns a job too (at
  // least once is the contract), but that is not what the kill cost.
  EXPECT_LE(c.rerun_after("victim"), static_cast<std::size_t>(kConcurrency));
  EXPECT_EQ(completed("crash"), kJobs);
  QueueStats s = stats_of("crash");
  EXPECT_EQ(s.dead, 0);
  std::printf("kill -9: %d jobs, %zu ran twice (%zu first run by the victim; bound %d), %lld reaped\n", kJobs,
              c.rerun(), c.rerun_after("victim"), kConcurrency, static_cast<long long>(s.counters["reaped"]));
}

TEST_F(Lifecycle, SigtermReleasesWhatDoesNotFinishWithinTheDrain) {
  // Signalled once the handler runs: a job only leased is released at once,
  // and this test is about the drain's wait for one that runs.
  const std::string started = server.dir() + "/started.txt";
  EmqdProcess d(config_head(server) +
                "  - name: drain\n    concurrency: 2\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo $EMQ_JOB_ID >> " +
                started + "; exec sleep 60\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string id = put("drain", "x");
  ASSERT_TRUE(wait_for([&] { return read_ledger(started).distinct() == 1; }, seconds(10))) << d.log();
  const auto began = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_GE(took, 4.5) << "it should have waited for the drain timeout";
  auto r = row("drain", id);
  EXPECT_EQ(r["state"], "pending");
  EXPECT_EQ(r["attempts"], "0") << "a released attempt does not count";
  EXPECT_EQ(r.count("failures"), 0u) << "the stop is not the job's failure";
  QueueStats s = stats_of("drain");
  EXPECT_EQ(s.counters["released"], 1);
  EXPECT_EQ(s.pending, 1);
}

TEST_F(Lifecycle, SigtermLetsARunningJobFinish) {
  // The signal waits for the handler to have started, not for the lease: a
  // job leased but not yet handed to a slot is rightly released by the drain.
  const std::string started = server.dir() + "/started.txt";
  EmqdProcess d(config_head(server) +
                "  - name: drain\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo $EMQ_JOB_ID >> " +
                started + "; exec sleep 1\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  put("drain", "x");
  put("drain", "y");
  ASSERT_TRUE(wait_for([&] { return read_ledger(started).distinct() == 1; }, seconds(10))) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
  QueueStats s = stats_of("drain");
  EXPECT_EQ(s.counters["completed"], 1) << "the running job finishes";
  EXPECT_EQ(s.pending, 1) << "and no new one is claimed during the drain";
  EXPECT_EQ(s.counters["released"], 0);
}

TEST_F(Lifecycle, PrefetchHoldsConcurrencyPlusPrefetchAndTheDrainReleasesWhatDidNotStart) {
  // Each run leaves a line in `started` before it sleeps: the signal must
  // come once a slot runs a job, not merely once three are leased (a loaded
  // machine may lease three before the slot starts the first, and then the
  // drain rightly releases all three).
  const std::string started = server.dir() + "/started.txt";
  EmqdProcess d(config_head(server) +
                "  - name: ahead\n    concurrency: 1\n    prefetch: 2\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"echo $EMQ_JOB_ID >> " +
                started + "; exec sleep 4\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  for (int i = 0; i < 6; ++i) put("ahead", std::to_string(i));
  std::int64_t most_active = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        QueueStats s = stats_of("ahead");
        most_active = std::max(most_active, s.active);
        return s.active == 3 && s.pending == 3 && read_ledger(started).distinct() == 1;
      },
      seconds(10)))
      << d.log();
  EXPECT_EQ(most_active, 3) << "one running and two claimed ahead, never more";

  d.signal(SIGTERM);
  // The two waiting go back while the running one still sleeps.
  EXPECT_TRUE(wait_for(
      [&] {
        QueueStats s = stats_of("ahead");
        return s.counters["released"] == 2 && s.pending == 5 && s.active == 1;
      },
      seconds(2)))
      << d.log();
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
  QueueStats s = stats_of("ahead");
  EXPECT_EQ(s.counters["completed"], 1) << "the running job finishes within the drain";
  EXPECT_EQ(s.counters["released"], 2);
  EXPECT_EQ(s.pending, 5);
  EXPECT_EQ(s.active, 0);
}

TEST_F(Lifecycle, ServerStoppedAndRestartedMidRunLosesNothing) {
  ValkeyServer durable(ValkeyServer::Options{true, {}});
  Executor dx(durable.options());
  const int kJobs = 300;
  for (int i = 0; i < kJobs; ++i) enqueue(dx, QueueKeys("restart"), mint_job_id(), std::to_string(i));
  EmqdProcess d(config_head(durable) +
                "  - name: restart\n    concurrency: 4\n    lease_ms: 5000\n"
                "    handler:\n      type: exec\n" +
                ledger_handler_yaml(durable.dir() + "/ledger.txt", "a", "sleep 0.01"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return stats(dx, QueueKeys("restart")).counters["completed"] >= 50; }, seconds(30)));
  durable.stop();
  std::this_thread::sleep_for(milliseconds(1500));  // the outage itself, not a wait for a condition
  durable.start();
  ASSERT_TRUE(wait_for(
      [&] {
        try {
          QueueStats s = stats(dx, QueueKeys("restart"));
          return s.counters["completed"] >= kJobs && s.pending + s.active + s.delayed == 0;
        } catch (const Error&) {
          return false;
        }
      },
      seconds(60)))
      << d.log();
  LedgerCounts c = read_ledger(durable.dir() + "/ledger.txt");
  EXPECT_EQ(c.distinct(), static_cast<std::size_t>(kJobs));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
