// The progress sender against a real valkey-server, with a claim loop
// running each job as a real process (tests/handlers/progress.sh, which
// reports on EMQ_PROGRESS_FD and waits for files the test writes): each
// report reaches the job's row, the latest one standing, and a report made
// after the lease was lost changes nothing on the server.
#include "duties/progress_sender.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "claim_loop.h"
#include "command_log.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "handlers/exec_handler.h"
#include "process_probe.h"
#include "take_lease.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

class ProgressSenderTest : public ::testing::Test {
 protected:
  ProgressSenderTest() {
    // The handler waits for files in dir; a lease of 30 s outlasts any
    // wait here, so only take_lease ends one.
    q.handler.command = {test::handler_program("progress.sh"), dir.path()};
    q.handler.timeout_s = 60;
    q.name = "p";
    q.concurrency = 1;
    q.lease_ms = 30000;
    q.poll_max_ms = 20;
    handler = make_exec_handler(q, {});
    handler->start();
  }
  ~ProgressSenderTest() override {
    if (!loop) return;
    loop->request_stop(std::chrono::milliseconds(0));
    loop->join();
  }
  // One job enqueued, its loop and the sender started: the job's id.
  std::string run_one() {
    const std::string id = mint_job_id();
    enqueue(x, keys, id, "payload");
    loop = std::make_unique<ClaimLoop>(q, server.options(), *handler, metrics);
    sender = std::make_unique<ProgressSender>(std::vector<ClaimLoop*>{loop.get()}, server.options(), metrics);
    loop->start();
    sender->start();
    return id;
  }
  std::string progress_of(const std::string& id) {
    const Reply r = x.command({"HGET", keys.row(id), "progress"});
    return r.type == Reply::Type::String ? r.str : "(none)";
  }
  void touch(const std::string& name) { std::ofstream(dir.path() + "/" + name).put('\n'); }

  test::TempDir dir;
  QueueConfig q;
  test::ValkeyServer server;
  Executor x{server.options()};
  QueueKeys keys{"p"};
  Metrics metrics{{"p"}, "test"};
  std::unique_ptr<Handler> handler;
  std::unique_ptr<ClaimLoop> loop;
  std::unique_ptr<ProgressSender> sender;  // stopped before the loop it reads
};

TEST_F(ProgressSenderTest, EachReportReachesTheRowAndTheLatestStands) {
  const std::string id = run_one();
  EXPECT_TRUE(test::wait_for([&] { return progress_of(id) == "one"; }, seconds(10))) << progress_of(id);
  touch("after");
  EXPECT_TRUE(test::wait_for([&] { return progress_of(id) == "two"; }, seconds(10))) << progress_of(id);
  touch("go");
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["completed"] == 1; }, seconds(10)));
}

TEST_F(ProgressSenderTest, AReportAfterTheLeaseWasLostChangesNothing) {
  const std::string id = run_one();
  ASSERT_TRUE(test::wait_for([&] { return progress_of(id) == "one"; }, seconds(10))) << progress_of(id);
  loop->stop_claiming();  // so the requeued job is not claimed again here
  // Another worker's reaper takes the lease; the job's process, still
  // running here, then reports again.
  ASSERT_EQ(test::take_lease(x, keys, id), 1) << "reap's requeued";
  test::CommandLog log(server.options());
  const std::string sha = log.sha_of(Script::Progress);
  touch("after");
  // "two" is reported while the process still runs (it waits for "go"),
  // so it is sent within a round (250 ms): the server's log shows it sent,
  // the fenced transition refuses it, and the row keeps the last report
  // stored under the lease.
  const auto sent_two = [&] {
    for (const auto& argv : log.calls("EVALSHA", {sha})) {
      if (std::find(argv.begin(), argv.end(), "two") != argv.end()) return true;
    }
    return false;
  };
  ASSERT_TRUE(test::wait_for(sent_two, seconds(10))) << "the sender never sent the report made after the loss";
  EXPECT_EQ(progress_of(id), "one");
  touch("go");
  EXPECT_TRUE(test::wait_for([&] { return loop->leased_count() == 0; }, seconds(10)));
  EXPECT_EQ(progress_of(id), "one");
  EXPECT_EQ(stats(x, keys).pending, 1);
}

}  // namespace
}  // namespace echomq::daemon
