// SIGTERM in the middle of a run: the daemon stops claiming, lets short jobs
// finish, releases the ones that outlast the drain, and exits 0. The stop is
// nobody's failure: no job is counted retried or dead because of it, and a
// second daemon then finishes everything. The drain lasts as long as the
// running jobs, not as long as its bounds: an idle daemon stops at once.
#include "echomq/daemons.h"
#include "fault_fixture.h"

namespace echomq::test {
namespace {

class Sigterm : public Faults {};

TEST_F(Sigterm, MidRunEveryJobIsDrainedOrReleasedAndNoneCountsAsFailed) {
  const int kShort = 400, kLong = 2, kConcurrency = 4;
  FaultSettings f;
  // Long enough for a short job in flight at the signal to finish on a
  // loaded machine (with 1 s, one that took longer was released too), far
  // shorter than a long one.
  f.drain_timeout_s = 4;
  // Under daemon "a" a "long" job outlasts the drain; anywhere else it is short.
  const std::string work = "if [ \\\"$DAEMON\\\" = a ] && [ \\\"$(cat)\\\" = long ]; then sleep 60; fi";
  auto config = [&](const std::string& name) {
    return fault_config_head(server.url(), f) + ledger_queue("term", kConcurrency, 30000, ledger_path(), name, work);
  };
  // The long ones first, so they hold two slots when the signal comes.
  std::vector<std::string> ids = put_many("term", kLong, "long");
  for (const std::string& id : put_many("term", kShort, "short")) ids.push_back(id);

  EmqdProcess a(config("a"));
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(wait_for([&] { return completed("term") >= 40; }, seconds(60))) << a.log();
  ASSERT_EQ(row("term", ids[0])["state"], "active") << "the long jobs should hold their slots";
  ASSERT_EQ(row("term", ids[1])["state"], "active");
  const auto began = std::chrono::steady_clock::now();
  a.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(seconds(20)), 0) << a.log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_LT(took, f.drain_timeout_s + 6) << "drain 4 s, then stop and release";

  QueueStats after = stats_of("term");
  EXPECT_EQ(after.active, 0) << "a stopped daemon holds no lease";
  // Given back: the jobs that outlasted the drain, and any claimed for a
  // free slot that had not started it when the signal came (nothing starts
  // after it). A short job that had started finished within the drain.
  EXPECT_GE(after.counters["released"], kLong);
  EXPECT_LE(after.counters["released"], kLong + kConcurrency);
  const LedgerCounts ran_under_a = read_ledger(ledger_path());
  for (std::size_t i = kLong; i < ids.size(); ++i) {
    if (row("term", ids[i])["state"] != "pending") continue;
    EXPECT_EQ(ran_under_a.runs.count(ids[i]), 0u) << ids[i] << ": a short job that started was released";
  }
  EXPECT_EQ(after.counters["retried"], 0) << "the stop is not a failure";
  EXPECT_EQ(after.counters["dead"], 0);
  EXPECT_EQ(after.counters["reaped"], 0);
  for (const std::string& id : {ids[0], ids[1]}) {
    auto r = row("term", id);
    EXPECT_EQ(r["state"], "pending") << id;
    EXPECT_EQ(r["attempts"], "0") << id << ": a released attempt does not count";
    EXPECT_EQ(r.count("failures"), 0u) << id;
  }
  const std::int64_t done_by_a = after.counters["completed"];

  EmqdProcess b(config("b"));
  ASSERT_TRUE(all_completed(x, "term", kShort + kLong, seconds(120))) << b.log();
  LedgerCounts c = expect_all_completed(x, "term", ids, ledger_path());
  EXPECT_EQ(c.rerun(), static_cast<std::size_t>(kLong)) << "only the released jobs ran again";
  EXPECT_EQ(c.runs[ids[0]], 2);
  EXPECT_EQ(c.runs[ids[1]], 2);
  QueueStats end = stats_of("term");
  EXPECT_EQ(end.counters["retried"], 0);
  EXPECT_EQ(end.counters["dead"], 0);
  report_figures("SIGTERM mid-run",
                 "jobs=" + std::to_string(kShort + kLong) + " completed_before_exit=" + std::to_string(done_by_a) +
                     " released=" + std::to_string(after.counters["released"]) +
                     " ran_twice=" + std::to_string(c.rerun()) + " bound=" + std::to_string(kConcurrency) +
                     " (concurrency) retried=0 dead=0 exit=0 stop_took_s=" + std::to_string(took));
  b.signal(SIGTERM);
  EXPECT_EQ(b.wait_exit(seconds(15)), 0) << b.log();
}

// The drain waits for running jobs, and only for them: a daemon with
// nothing in flight stops at once, far within both bounds (the drain's 30 s
// here, and the 5 s the last outcomes may take to reach a slow server).
TEST_F(Sigterm, ADaemonWithNothingInFlightStopsAtOnce) {
  FaultSettings f;
  f.drain_timeout_s = 30;
  EmqdProcess d(fault_config_head(server.url(), f) +
                ledger_queue("idle", 4, 30000, ledger_path(), "a", "true", "    poll_max_ms: 1000\n") +
                "daemon:\n  beat_s: 0.2\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  // Idle as a daemon mostly is: up a while, its claims polling at their
  // slowest (right after start they poll every few ms).
  ASSERT_TRUE(wait_for(
      [&] {
        const Fleet fleet = list_daemons(x, false);
        return !fleet.daemons.empty() && fleet.daemons[0].beat_ms - fleet.daemons[0].started_ms > 2000;
      },
      seconds(20)))
      << d.log();
  const auto began = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  report_figures("SIGTERM idle", "stop_took_s=" + std::to_string(took) + " drain_bound_s=30 flush_bound_s=5");
  EXPECT_LT(took, 3.0) << "an idle daemon waited for a bound meant for jobs in flight\n" << d.log();
}

// A running job is waited for, then the daemon stops: the job's end, not a
// bound, says when.
TEST_F(Sigterm, TheDrainEndsWhenTheLastRunningJobDoes) {
  FaultSettings f;
  f.drain_timeout_s = 30;
  EmqdProcess d(fault_config_head(server.url(), f) + ledger_queue("one", 2, 30000, ledger_path(), "a", "sleep 1"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string id = put_many("one", 1).front();
  // Started, not only claimed: a job claimed and not yet started at the
  // signal is released unrun. The handler's ledger line is its first act.
  ASSERT_TRUE(wait_for([&] { return read_ledger(ledger_path()).runs.count(id) == 1; }, seconds(20))) << d.log();
  const auto began = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(40)), 0) << d.log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  report_figures("SIGTERM with a 1 s job running", "stop_took_s=" + std::to_string(took) + " drain_bound_s=30");
  EXPECT_EQ(stats_of("one").counters["completed"], 1) << "the running job finished within the drain";
  EXPECT_LT(took, 4.0) << "the job took 1 s; the daemon waited for more\n" << d.log();
}

}  // namespace
}  // namespace echomq::test
