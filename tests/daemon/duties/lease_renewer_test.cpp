// Lease renewal against a real valkey-server, with a claim loop running
// each job as a real process (tests/handlers/rendezvous.sh, held at a
// gate): a running job's lease outlives lease_ms, and a lease found lost
// stops its handler, whose outcome then counts for nothing.
#include "duties/lease_renewer.h"

#include <gtest/gtest.h>

#include "claim_loop.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "handler_gate.h"
#include "handlers/exec_handler.h"
#include "take_lease.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class LeaseRenewerTest : public ::testing::Test {
 protected:
  LeaseRenewerTest() {
    q.name = "r";
    q.concurrency = 1;
    // Renewed every 667 ms: a lease of 300 ms was lost on a host at load
    // 12, whose renewer woke more than 200 ms late. Still a renewal late
    // by over a second is a lease lost, as it would be in production.
    q.lease_ms = 2000;
    q.poll_max_ms = 20;
    q.handler = gate.handler();
    handler = make_exec_handler(q, {});
    handler->start();
  }
  test::ValkeyServer server;
  Executor x{server.options()};
  test::HandlerGate gate;
  QueueConfig q;
  QueueKeys keys{"r"};
  Metrics metrics{{"r"}, "test"};
  std::unique_ptr<Handler> handler;
};

TEST_F(LeaseRenewerTest, KeepsARunningJobsLeaseAliveLongPastLeaseMs) {
  enqueue(x, keys, mint_job_id(), "p");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  LeaseRenewer renewer({&loop}, server.options(), metrics);
  loop.start();
  renewer.start();
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() == 1; }, seconds(10)));
  // For over two lease lengths, the reaper finds nothing expired.
  EXPECT_FALSE(test::wait_for([&] { return reap(x, keys, 5, 100).requeued > 0; }, milliseconds(4500)));
  gate.open();
  EXPECT_TRUE(test::wait_for([&] { return stats(x, keys).counters["completed"] == 1; }, seconds(10)));
  EXPECT_EQ(metrics.queue("r").lease_lost->Value(), 0);
}

TEST_F(LeaseRenewerTest, ALostLeaseStopsItsHandlerAndItsOutcomeIsDiscarded) {
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "p");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  LeaseRenewer renewer({&loop}, server.options(), metrics);
  loop.start();
  renewer.start();
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() == 1; }, seconds(10)));
  loop.stop_claiming();  // so the requeued job is not claimed again here
  // Another worker's reaper takes the lease.
  ASSERT_EQ(test::take_lease(x, keys, id), 1) << "reap's requeued";
  // The gate stays shut: only the stop ends the process, and the job
  // leaves the loop's books when its handler has returned.
  EXPECT_TRUE(test::wait_for([&] { return metrics.queue("r").lease_lost->Value() == 1; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return loop.leased_count() == 0; }, seconds(10)));
  // Not failed, released or completed by this run: the reaper's requeue
  // stands, and the job waits in pending for its next run.
  QueueStats s = stats(x, keys);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.counters["completed"], 0);
  EXPECT_EQ(metrics.queue("r").failed_retry->Value(), 0);
  EXPECT_EQ(metrics.queue("r").released->Value(), 0);
}

// A job whose outcome is on its way (its handler has returned) when a
// renewal finds its lease gone: the outcome may have reached the server
// first, so the renewal says nothing and the settle's reply decides. Here
// the lease really was taken: it is counted lost once, by the settle.
TEST_F(LeaseRenewerTest, ALeaseGoneWhileItsOutcomeIsOnItsWayIsCountedOnceByTheSettle) {
  const std::string id = mint_job_id();
  enqueue(x, keys, id, "p");
  ClaimLoop loop(q, server.options(), *handler, metrics);
  LeaseRenewer renewer({&loop}, server.options(), metrics);
  loop.start();
  ASSERT_TRUE(test::wait_for([&] { return gate.arrived().size() == 1; }, seconds(10)));
  loop.stop_claiming();
  loop.leased_jobs().finish({id, 1});  // as the runner marks it when the handler returns
  ASSERT_EQ(test::take_lease(x, keys, id), 1) << "reap's requeued";
  renewer.start();
  // Two renewal periods: the renewal meets the lost lease and stops nothing.
  EXPECT_FALSE(test::wait_for([&] { return metrics.queue("r").lease_lost->Value() > 0; }, milliseconds(1500)));
  EXPECT_EQ(loop.leased_jobs().reason({id, 1}), StopReason::None);
  gate.open();
  EXPECT_TRUE(test::wait_for([&] { return loop.leased_count() == 0; }, seconds(10)));
  EXPECT_EQ(metrics.queue("r").lease_lost->Value(), 1) << "the complete found the lease gone";
  EXPECT_EQ(stats(x, keys).counters["completed"], 0);
}

}  // namespace
}  // namespace echomq::daemon
