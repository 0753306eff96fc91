// The wake-up subscriber against a real valkey-server, with a claim loop
// whose jobs run as real processes (tests/handlers/ok.sh): it switches
// keyspace events on when allowed to, a job enqueued into an idle queue is
// claimed long before the loop's next poll, it leaves a server without
// events alone when not allowed, and it subscribes again after a restart.
#include "duties/wakeup.h"

#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "handlers/exec_handler.h"
#include "process_probe.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

class WakeupTest : public ::testing::Test {
 protected:
  WakeupTest() {
    q.name = "idle";
    q.poll_max_ms = 60000;  // polling alone would leave a job waiting up to a minute
    q.handler.command = {test::handler_program("ok.sh")};
    q.handler.timeout_s = 20;
    handler = make_exec_handler(q, {});
    handler->start();
  }
  std::string keyspace_events() {
    const Reply r = x.command({"CONFIG", "GET", "notify-keyspace-events"});
    return r.elements.size() == 2 ? r.elements[1].str : "(unreadable)";
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  QueueConfig q;
  const QueueKeys keys{"idle"};
  Metrics metrics{{"idle"}, "test"};
  std::unique_ptr<Handler> handler;
};

// An idle loop doubles its wait after each empty claim (an EVALSHA: the
// executor loads its scripts when it connects), so after its twelfth the
// next is 4 s away: a claim within 2 s of the enqueue is the event's doing.
TEST_F(WakeupTest, SwitchesKeyspaceEventsOnAndAJobEnqueuedIntoAnIdleQueueIsClaimedAtOnce) {
  ASSERT_EQ(keyspace_events(), "");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  Wakeup wakeup({&loop}, server.options(), true);
  loop.start();
  wakeup.start();
  ASSERT_TRUE(test::wait_for([&] { return wakeup.active(); }, seconds(10)));
  const std::string flags = keyspace_events();
  EXPECT_NE(flags.find('K'), std::string::npos) << flags;
  EXPECT_TRUE(flags.find('z') != std::string::npos || flags.find('A') != std::string::npos) << flags;

  ASSERT_TRUE(test::wait_for([&] { return server.calls("evalsha") >= 12; }, seconds(30)));
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "hello");
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["claimed"] == 1; }, seconds(2)));
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["completed"] == 1; }, seconds(10)));
}

// A grouped job waits in its group's zset (docs/protocol.md, "Groups"), not
// in pending: its enqueue wakes an idle loop all the same.
TEST_F(WakeupTest, AGroupedJobEnqueuedIntoAnIdleQueueIsClaimedAtOnce) {
  ClaimLoop loop(q, server.options(), *handler, metrics);
  Wakeup wakeup({&loop}, server.options(), true);
  loop.start();
  wakeup.start();
  ASSERT_TRUE(test::wait_for([&] { return wakeup.active(); }, seconds(10)));
  ASSERT_TRUE(test::wait_for([&] { return server.calls("evalsha") >= 12; }, seconds(30)));
  EnqueueOptions o;
  o.group = "tenant-7";
  ASSERT_EQ(enqueue(x, keys, mint_job_id(), "hello", o), EnqueueResult::Enqueued);
  ASSERT_EQ(x.command({"ZCARD", keys.pending}).integer, 0) << "the job should wait in its group, not in pending";
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["claimed"] == 1; }, seconds(2)));
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["completed"] == 1; }, seconds(10)));
}

TEST_F(WakeupTest, LeavesAServerWithoutEventsAloneWhenNotAllowedToSwitchThemOn) {
  test::LogCapture log;
  ClaimLoop loop(q, server.options(), *handler, metrics);
  Wakeup wakeup({&loop}, server.options(), false);
  wakeup.start();
  ASSERT_TRUE(test::wait_for([&] { return log.contains("the server publishes no keyspace events"); }, seconds(10)))
      << ::testing::PrintToString(log.lines());
  EXPECT_FALSE(wakeup.active());
  EXPECT_EQ(keyspace_events(), "");
}

TEST_F(WakeupTest, SubscribesAgainAfterTheServerRestarts) {
  ClaimLoop loop(q, server.options(), *handler, metrics);
  Wakeup wakeup({&loop}, server.options(), true);
  wakeup.start();
  ASSERT_TRUE(test::wait_for([&] { return wakeup.active(); }, seconds(10)));
  server.stop();
  ASSERT_TRUE(test::wait_for([&] { return !wakeup.active(); }, seconds(10)));
  server.start();  // without AOF: the server's config is its default again, no events
  ASSERT_TRUE(test::wait_for([&] { return wakeup.active(); }, seconds(20)));
  EXPECT_NE(keyspace_events().find('K'), std::string::npos) << "switched on again";
}

}  // namespace
}  // namespace echomq::daemon
