// emq pause, emq resume, emq cancel.
#include <gtest/gtest.h>

#include "cli_fixture.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class ControlCli : public CliTest {};

TEST_F(ControlCli, PauseStopsClaimsAndResumeLetsThemGoOn) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_p1", "p"), EnqueueResult::Enqueued);
  register_queues(x(), {queue()});

  EmqResult r = emq({"pause", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("paused " + queue() + " by ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(", until resumed\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(stats(x(), keys()).paused);
  EXPECT_TRUE(claim(x(), keys(), {30000, 1, 0}).empty()) << "a paused queue handed out a job";

  r = emq({"resume", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "resumed " + queue() + "\n");
  EXPECT_FALSE(stats(x(), keys()).paused);
  EXPECT_EQ(claim(x(), keys(), {30000, 1, 0}).size(), 1u);
}

TEST_F(ControlCli, PausingAnUnknownQueueWarnsButPauses) {
  EmqResult r = emq({"pause", queue()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("is not a known queue"), std::string::npos) << r.err;
  EXPECT_TRUE(stats(x(), keys()).paused);
}

TEST_F(ControlCli, CancelRemovesPendingDelayedAndDeadJobs) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_c1", "p"), EnqueueResult::Enqueued);
  EnqueueOptions later;
  later.due_ms = x().server_time_ms() + 3600000;
  ASSERT_EQ(enqueue(x(), keys(), "JOB_c2", "p", later), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_c3", "p"), EnqueueResult::Enqueued);
  // JOB_c1 is first in line: claim it and kill it.
  std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  FailArgs permanent;
  permanent.permanent = true;
  ASSERT_EQ(fail(x(), keys(), {jobs[0].id, jobs[0].lease_epoch}, permanent), FailResult::Dead);

  for (const char* id : {"JOB_c1", "JOB_c2", "JOB_c3"}) {
    EmqResult r = emq({"cancel", queue(), id});
    EXPECT_EQ(r.exit_code, 0) << id << ": " << r.err;
    EXPECT_EQ(r.out, std::string("cancelled ") + id + "\n");
    EXPECT_FALSE(inspect(x(), keys(), id).has_value()) << id;
  }
  QueueStats s = stats(x(), keys());
  EXPECT_EQ(s.pending + s.delayed + s.dead + s.active, 0);
}

TEST_F(ControlCli, CancelNotFoundIsExit1) {
  EmqResult r = emq({"cancel", queue(), "JOB_gone"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("emq: no job JOB_gone in queue " + queue(), 0), 0u) << r.err;
}

TEST_F(ControlCli, CancelOfARunningJobIsRefusedWithExit4) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_run", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(claim(x(), keys(), {30000, 1, 0}).size(), 1u);
  EmqResult r = emq({"cancel", queue(), "JOB_run"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("JOB_run is running"), std::string::npos) << r.err;
  EXPECT_EQ(inspect(x(), keys(), "JOB_run")->fields.at("state"), "active");
}

TEST_F(ControlCli, BadArgumentsAreUsage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"pause", "a}b"},
           {"resume"},
           {"cancel", queue(), "nojob"},
           {"cancel", queue()},
           {"pause", queue(), "extra"},
       }) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
  }
  EXPECT_FALSE(stats(x(), keys()).paused);
}

}  // namespace
}  // namespace echomq::test
