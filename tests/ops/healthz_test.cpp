// The health verdict: what makes /healthz answer 503, and what makes the
// daemon stop pinging the systemd watchdog. Unit cases drive the clock by
// hand; the last case watches a real claim loop against a real server.
#include "healthz.h"

#include <gtest/gtest.h>

#include <atomic>

#include "claim_loop.h"
#include "metrics.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using Clock = Health::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::now();

Health::Loop loop_at(const std::string& queue, Clock::time_point last, milliseconds allowed = seconds(6)) {
  return {queue, [last] { return last; }, allowed, {}};
}

TEST(Health, OkWhileTheServerAnswersAndEveryLoopTurns) {
  Health h({loop_at("emails", t0), loop_at("thumbs", t0 - seconds(2))}, [] { return true; });
  HealthVerdict v = h.check(t0 + seconds(1));
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.reason, "ok");
}

TEST(Health, AStalledLoopIsUnhealthyAndNamed) {
  Health h({loop_at("emails", t0), loop_at("thumbs", t0 - seconds(10))}, [] { return true; });
  HealthVerdict v = h.check(t0 + seconds(1));
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "claim loop not turning: queue thumbs (11.0 s, limit 6.0 s)");
  EXPECT_EQ(v.reason.find('\n'), std::string::npos) << "one line";
}

TEST(Health, EveryStalledLoopIsNamed) {
  Health h({loop_at("a", t0 - seconds(7)), loop_at("b", t0), loop_at("c", t0 - seconds(30))}, [] { return true; });
  EXPECT_EQ(h.check(t0).reason, "claim loop not turning: queue a (7.0 s, limit 6.0 s), queue c (30.0 s, limit 6.0 s)");
}

TEST(Health, TheLimitItselfIsStillHealthy) {
  Health h({loop_at("emails", t0, seconds(6))}, [] { return true; });
  EXPECT_TRUE(h.check(t0 + seconds(6)).healthy);
  EXPECT_FALSE(h.check(t0 + seconds(6) + milliseconds(1)).healthy);
}

TEST(Health, AHandlerThatCannotStartIsUnhealthyNamingTheQueueButNotForTheWatchdog) {
  Health::Loop thumbs = loop_at("thumbs", t0);
  thumbs.handler_problem = [] { return std::string("no pool process is up: pool process 7 exited"); };
  Health h({loop_at("emails", t0), thumbs}, [] { return true; });
  HealthVerdict v = h.check(t0);
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "queue thumbs claims nothing, its handler cannot start: no pool process is up: pool process 7 exited");
  EXPECT_TRUE(h.loops(t0).healthy) << "a restart does not mend a bad deploy";
}

TEST(Health, TheServerDownIsUnhealthyEvenWithLoopsTurning) {
  Health h({loop_at("emails", t0)}, [] { return false; });
  HealthVerdict v = h.check(t0);
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "the server does not answer");
}

TEST(Health, TheServerDownAndAStalledLoopAreBothSaid) {
  Health h({loop_at("emails", t0 - seconds(20))}, [] { return false; });
  EXPECT_EQ(h.check(t0).reason,
            "the server does not answer; claim loop not turning: queue emails (20.0 s, limit 6.0 s)");
}

TEST(Health, TheServerFlagIsReadAtEachCheck) {
  std::atomic<bool> up{true};
  Health h({loop_at("emails", t0)}, [&] { return up.load(); });
  EXPECT_TRUE(h.check(t0).healthy);
  up = false;
  EXPECT_FALSE(h.check(t0).healthy);
  up = true;
  EXPECT_TRUE(h.check(t0).healthy);
}

TEST(Health, LivenessLooksAtTheLoopsOnly) {
  // The watchdog's question: a server outage is ridden out, not a reason for
  // systemd to kill the daemon and its running jobs.
  Health h({loop_at("emails", t0)}, [] { return false; });
  EXPECT_TRUE(h.loops(t0).healthy);
  Health stuck({loop_at("emails", t0 - seconds(60))}, [] { return true; });
  EXPECT_FALSE(stuck.loops(t0).healthy);
  EXPECT_NE(stuck.loops(t0).reason.find("queue emails"), std::string::npos);
}

TEST(Health, NoQueuesIsHealthyWhileTheServerAnswers) {
  Health h({}, [] { return true; });
  EXPECT_TRUE(h.check(t0).healthy);
}

// A handler that completes every job at once.
class Done : public Handler {
 public:
  Outcome run(const Job&, const StopToken&) override { return {Outcome::Verdict::Complete, "ok", ""}; }
};

TEST(Health, ARealClaimLoopIsHealthyWhileItRunsAndStallsOnceItStops) {
  test::ValkeyServer server;
  QueueConfig q;
  q.name = "health_loop";
  q.poll_max_ms = 100;
  Metrics metrics({q.name}, "test");
  Done handler;
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  const milliseconds call_limit(1500);
  Health h({Health::watch(loop, call_limit)}, [] { return true; });

  // Alive: the last turn keeps moving (the loop turns at least once a
  // second even with nothing to claim).
  const Clock::time_point first = loop.last_turn();
  ASSERT_TRUE(test::wait_for([&] { return loop.last_turn() > first + milliseconds(500); }, seconds(3)));
  EXPECT_TRUE(h.check().healthy) << h.check().reason;

  loop.request_stop(milliseconds(0));
  loop.join();
  const Clock::time_point last = loop.last_turn();
  EXPECT_FALSE(test::wait_for([&] { return loop.last_turn() != last; }, milliseconds(1200)))
      << "a stopped loop no longer turns";
  // Its allowance: 5 s of slack, poll_max_ms, and one server call.
  const milliseconds allowed = seconds(5) + milliseconds(q.poll_max_ms) + call_limit;
  EXPECT_TRUE(h.check(last + allowed).healthy);
  HealthVerdict v = h.check(last + allowed + milliseconds(1));
  EXPECT_FALSE(v.healthy);
  EXPECT_NE(v.reason.find("queue health_loop"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace echomq::daemon
