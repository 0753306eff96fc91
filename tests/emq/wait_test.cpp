// emq wait: until a job completes (its result) or dies (its error), or the
// time given runs out; and what it says when no result can ever be seen.
#include <gtest/gtest.h>

#include <future>
#include <sstream>

#include "cli_fixture.h"
#include "echomq/transitions.h"
#include "echomq/wait.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

class WaitCli : public CliTest {
 protected:
  // emq wait in the background, the way a script would run it beside the
  // workers. Returns once it has read the job's row, so what the test does
  // next happens while it waits.
  static bool has_looked(const std::string& clients) {
    std::istringstream lines(clients);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(" name=emq ") != std::string::npos && line.find(" cmd=hmget ") != std::string::npos) return true;
    }
    return false;
  }
  std::future<EmqResult> wait_in_background(std::vector<std::string> args) {
    auto f = std::async(std::launch::async, [this, args] { return emq(args); });
    // Ready once emq has read the row (its first HMGET), not merely once it
    // connected: a change landing before that first look is "no such job".
    EXPECT_TRUE(wait_for(
        [&] {
          return has_looked(server().cli({"CLIENT", "LIST"}));
        },
        std::chrono::seconds(20)))
        << "emq wait never read the job's row";
    return f;
  }
  Lease claim_it(const std::string& id) {
    std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
    EXPECT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs.empty() ? "" : jobs[0].id, id);
    return jobs.empty() ? Lease{} : Lease{jobs[0].id, jobs[0].lease_epoch};
  }
};

TEST_F(WaitCli, PrintsTheResultOnceTheJobCompletes) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w1", "p"), EnqueueResult::Enqueued);
  auto done = wait_in_background({"wait", queue(), "JOB_w1", "--timeout", "30"});
  Lease l = claim_it("JOB_w1");
  ASSERT_EQ(complete(x(), keys(), l, 600000, std::string("42\0bytes", 8)), CompleteResult::Completed);
  EmqResult r = done.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("42\0bytes", 8)) << "the result, byte for byte";
  EXPECT_EQ(r.err, "");
}

TEST_F(WaitCli, PrintsTheErrorAndExitsOneWhenTheJobDies) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w2", "p"), EnqueueResult::Enqueued);
  auto done = wait_in_background({"wait", queue(), "JOB_w2"});
  Lease l = claim_it("JOB_w2");
  ASSERT_EQ(fail(x(), keys(), l, {"smtp 550", 5, 0, true}), FailResult::Dead);
  EmqResult r = done.get();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "smtp 550");
  EXPECT_EQ(r.err, "emq: JOB_w2 died after 1 attempt; its last error is on stdout\n");
}

TEST_F(WaitCli, SaysPlainlyWhenTheQueueKeepsNoCompletedRows) {
  // What a daemon publishes for a queue with keep_completed_s: 0.
  x().command({"HSET", keys().meta, "keep_completed_ms", "0"});
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w3", "p"), EnqueueResult::Enqueued);
  auto done = wait_in_background({"wait", queue(), "JOB_w3"});
  Lease l = claim_it("JOB_w3");
  ASSERT_EQ(complete(x(), keys(), l, 0, "lost"), CompleteResult::Completed);
  EmqResult r = done.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("keeps no completed rows (keep_completed_s: 0): its result can never be seen"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("JOB_w3 completed; its row was deleted at once"), std::string::npos) << r.err;
}

TEST_F(WaitCli, ARowThatVanishesWithoutPolicyIsSaidToHaveLeft) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w4", "p"), EnqueueResult::Enqueued);
  auto done = wait_in_background({"wait", queue(), "JOB_w4"});
  ASSERT_EQ(cancel(x(), keys(), "JOB_w4"), CancelResult::Removed);
  EmqResult r = done.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("left queue " + queue() + " without a row to show"), std::string::npos) << r.err;
}

TEST_F(WaitCli, TimeoutIsExitFiveAndNoSuchJobIsExitOne) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w5", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"wait", queue(), "JOB_w5", "--timeout", "0.3"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("JOB_w5 is still pending after 0.3 s"), std::string::npos) << "as typed: " << r.err;

  r = emq({"wait", queue(), "JOB_none", "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no job JOB_none"), std::string::npos) << r.err;

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"wait", queue(), "JOB_w5", "--timeout", "0"},
           {"wait", queue(), "JOB_w5", "--timeout", "-1"},
           {"wait", queue(), "TASK_1"},
           {"wait", queue()},
       }) {
    r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
  }
}

// Issue 48 row 2: a timeout of centuries overflowed the clock's deadline
// and ended the wait at once (exit 5). Past 10^9 s, as the Python and Node
// speakers' wait, it is refused naming the range and the value as typed;
// within it, the wait lasts.
TEST_F(WaitCli, ATimeoutPastTheRangeIsRefusedAsTypedAndALongOneWaits) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w6", "p"), EnqueueResult::Enqueued);
  for (const std::string timeout : {"1e10", "9.3e15", "1e308"}) {
    EmqResult r = emq({"wait", queue(), "JOB_w6", "--timeout", timeout});
    EXPECT_EQ(r.exit_code, 2) << timeout << ": " << r.err;
    EXPECT_NE(r.err.find("--timeout " + timeout + " is out of range"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("at most 10^9"), std::string::npos) << r.err;
  }
  auto done = wait_in_background({"wait", queue(), "JOB_w6", "--timeout", "1e9"});
  Lease l = claim_it("JOB_w6");
  ASSERT_EQ(complete(x(), keys(), l, 60000, "long"), CompleteResult::Completed);
  EmqResult r = done.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "long");
}

// The library's waiter alike: a timeout past what the clock can hold is
// as long as it takes, not a deadline already past.
TEST_F(WaitCli, TheWaiterTakesATimeoutPastTheClockAsNone) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_w7", "p"), EnqueueResult::Enqueued);
  auto ended = std::async(std::launch::async, [this] {
    Waiter w(server().options());
    return w.wait(keys(), {"JOB_w7"}, std::chrono::milliseconds::max()).front();
  });
  EXPECT_EQ(ended.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the wait ended before the job did";
  Lease l = claim_it("JOB_w7");
  ASSERT_EQ(complete(x(), keys(), l, 60000, "kept"), CompleteResult::Completed);
  const JobEnd end = ended.get();
  EXPECT_EQ(end.how, JobEnd::How::Completed);
  EXPECT_EQ(end.result, "kept");
}

}  // namespace
}  // namespace echomq::test
