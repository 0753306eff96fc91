// The handler slots of one queue, driven directly: jobs claimed from a real
// valkey-server, run as real processes (tests/handlers/), their outcomes
// handed back and settled on the server as the claim loop would. The
// runner runs up to `concurrency` jobs at once, hands each outcome back
// once, discards a job whose lease was lost, gives back one stopped for
// shutdown, and stops on request once what it started has run.
#include "job_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "handler_gate.h"
#include "handlers/exec_handler.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

class JobRunnerTest : public ::testing::Test {
 protected:
  JobRunnerTest() { q.name = "jobs"; }

  // Starts a runner of q's slots on `handler`; outcomes land in delivered.
  void start(const HandlerConfig& handler, int concurrency, int prefetch = 0) {
    q.concurrency = concurrency;
    q.prefetch = prefetch;
    q.handler = handler;
    handler_ = make_exec_handler(q, {});
    handler_->start();
    runner_ =
        std::make_unique<JobRunner>(q, *handler_, running, metrics.queue("jobs"), [this](std::optional<Settlement> s) {
          std::lock_guard<std::mutex> lock(mutex_);
          delivered_.push_back(std::move(s));
        });
    runner_->start();
  }
  JobRunner& runner() { return *runner_; }

  // Enqueues one job per payload, claims them all, and registers their
  // leases as the claim loop does: ready to submit.
  std::vector<JobRunner::Assignment> claimed(const std::vector<std::string>& payloads) {
    for (const std::string& p : payloads) enqueue(x, keys, mint_job_id(), p);
    std::vector<JobRunner::Assignment> out;
    for (ClaimedJob& job : claim(x, keys, {30000, static_cast<std::int64_t>(payloads.size()), 0})) {
      RunningJob* held = running.add({job.id, job.lease_epoch});
      out.push_back({std::move(job), held, {}, {}});
    }
    EXPECT_EQ(out.size(), payloads.size());
    return out;
  }
  std::vector<std::optional<Settlement>> delivered() {
    std::lock_guard<std::mutex> lock(mutex_);
    return delivered_;
  }
  bool delivered_count(std::size_t n) {
    return test::wait_for([&] { return delivered().size() == n; }, seconds(20));
  }
  // What the claim loop does with a settlement: record it on the server.
  Settled settle(const Settlement& s) {
    const Settled done = Settler::decode(s, x.eval_batch({settler.call(s)}).at(0));
    running.remove(s.lease);
    return done;
  }
  // One job, running as a process held at `gate` on the one slot: its lease.
  Lease one_job_at(const test::HandlerGate& gate) {
    start(gate.handler(), 1);
    std::vector<JobRunner::Assignment> jobs = claimed({"p"});
    const Lease lease = jobs.at(0).held->lease;
    runner().submit(std::move(jobs));
    EXPECT_TRUE(test::wait_for([&] { return gate.arrived().size() == 1; }, seconds(10)));
    return lease;
  }
  std::map<std::string, std::string> row(const std::string& id) { return inspect(x, keys, id).value().fields; }

  test::ValkeyServer server;
  Executor x{server.options()};
  QueueConfig q;
  const QueueKeys keys{"jobs"};
  Metrics metrics{{"jobs"}, "test"};
  RunningJobs running;
  Settler settler{q, keys};

 private:
  std::mutex mutex_;
  std::vector<std::optional<Settlement>> delivered_;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<JobRunner> runner_;  // before handler_ goes: declared after it
};

TEST_F(JobRunnerTest, RunsUpToConcurrencyJobsAtOnceAndTheRestWaitForASlot) {
  test::HandlerGate gate(3);
  start(gate.handler(), 3, 1);
  runner().submit(claimed({"a", "b", "c", "d", "e"}));
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() >= 3; }, seconds(10)));
  // Three processes wait at the gate; no slot is left for the other two.
  EXPECT_EQ(gate.arrived().size(), 3u);
  EXPECT_EQ(metrics.queue("jobs").in_flight->Value(), 3);
  EXPECT_EQ(runner().busy(), 5);
  const JobRunner::Capacity full = runner().capacity();
  EXPECT_EQ(full.room, 3 + 1 - 5) << "concurrency + prefetch, less the jobs handed over";
  EXPECT_FALSE(full.starving);

  gate.open();
  ASSERT_TRUE(delivered_count(5));
  for (const std::optional<Settlement>& s : delivered()) {
    ASSERT_TRUE(s);
    EXPECT_EQ(s->action, Settlement::Action::Complete);
    EXPECT_EQ(s->text, "met " + s->lease.id + "\n");
    EXPECT_EQ(settle(*s), Settled::Completed);
  }
  EXPECT_EQ(gate.arrived().size(), 5u);
  EXPECT_EQ(runner().busy(), 0);
  const JobRunner::Capacity idle = runner().capacity();
  EXPECT_EQ(idle.room, 4);
  EXPECT_TRUE(idle.starving);
  EXPECT_EQ(metrics.queue("jobs").in_flight->Value(), 0);
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.counters.at("completed"), 5);
  EXPECT_EQ(s.active, 0);
}

TEST_F(JobRunnerTest, HandsEachOutcomeBackAsTheSettlementThatRecordsIt) {
  q.backoff = {60000, 2.0, 3600000, 0};  // the retry stays delayed
  q.keep_completed_s = 60;               // the result can be read back
  HandlerConfig by_payload;
  by_payload.command = {test::handler_program("by_payload.sh")};
  by_payload.timeout_s = 20;
  start(by_payload, 3);
  std::vector<JobRunner::Assignment> jobs = claimed({"report", "retry", "dead"});
  const std::string done = jobs[0].job.id, retried = jobs[1].job.id, died = jobs[2].job.id;
  runner().submit(std::move(jobs));
  ASSERT_TRUE(delivered_count(3));
  for (const std::optional<Settlement>& s : delivered()) {
    ASSERT_TRUE(s);
    EXPECT_EQ(s->attempt, 1) << s->lease.id;
    settle(*s);
  }
  EXPECT_EQ(row(done).at("result"), "done:report");
  EXPECT_EQ(row(retried).at("state"), "delayed");
  EXPECT_THAT(row(retried).at("error"), HasSubstr("try again"));
  EXPECT_EQ(row(died).at("state"), "dead");
  EXPECT_THAT(row(died).at("error"), HasSubstr("bad input"));
  EXPECT_EQ(metrics.queue("jobs").handler_duration->Collect().histogram.sample_count, 3u);
  EXPECT_EQ(running.size(), 0u);
}

TEST_F(JobRunnerTest, AJobWhoseLeaseWasLostIsStoppedAndNothingIsHandedBack) {
  test::HandlerGate gate;
  const Lease lease = one_job_at(gate);
  ASSERT_TRUE(running.stop(lease, StopReason::LeaseLost));
  // The gate stays shut: only the stop ends the process.
  ASSERT_TRUE(delivered_count(1));
  EXPECT_FALSE(delivered()[0]) << "an outcome that can no longer count";
  EXPECT_EQ(running.size(), 0u) << "its lease left the books";
  EXPECT_EQ(stats(x, keys).active, 1) << "nothing sent: the lease is the reaper's, or another worker's";
}

TEST_F(JobRunnerTest, AJobStoppedForShutdownIsGivenBack) {
  test::HandlerGate gate;
  const Lease lease = one_job_at(gate);
  running.stop_all(StopReason::Shutdown);
  ASSERT_TRUE(delivered_count(1));
  ASSERT_TRUE(delivered()[0]);
  EXPECT_EQ(delivered()[0]->action, Settlement::Action::Release);
  EXPECT_EQ(settle(*delivered()[0]), Settled::Released);
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.counters.at("released"), 1);
  EXPECT_EQ(row(lease.id).at("attempts"), "0") << "a release counts no attempt";
}

// The drain: the jobs no slot started are taken back (the claim loop
// releases them), the running ones end, and the slots then end.
TEST_F(JobRunnerTest, StopsOnRequestOnceTheJobsItStartedHaveRun) {
  test::HandlerGate gate(2);
  start(gate.handler(), 2);
  runner().submit(claimed({"a", "b", "c", "d"}));
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() >= 2; }, seconds(10)));
  const std::vector<JobRunner::Assignment> unstarted = runner().take_waiting();
  ASSERT_EQ(unstarted.size(), 2u);
  for (const JobRunner::Assignment& a : unstarted) EXPECT_EQ(gate.arrived().count(a.job.id), 0u) << a.job.id;
  runner().request_stop();
  gate.open();
  runner().join();
  EXPECT_EQ(delivered().size(), 2u);
  EXPECT_EQ(runner().busy(), 0);
  EXPECT_EQ(gate.arrived().size(), 2u) << "no job started after the stop";
  for (const std::optional<Settlement>& s : delivered()) EXPECT_EQ(settle(*s), Settled::Completed);
  for (const JobRunner::Assignment& a : unstarted) {
    EXPECT_EQ(settle(Settlement::release(a.held->lease, a.job.attempt)), Settled::Released);
  }
  const QueueStats s = stats(x, keys);
  EXPECT_EQ(s.counters.at("completed"), 2);
  EXPECT_EQ(s.pending, 2);
  EXPECT_EQ(s.active, 0);
}

}  // namespace
}  // namespace echomq::daemon
