// The health verdict: what makes /healthz answer 503, and what makes the
// daemon stop pinging the systemd watchdog. Unit cases drive the clock by
// hand; the last case watches a real claim loop against a real server.
#include "endpoints/healthz.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "claim_loop.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "http_client.h"
#include "http/http_server.h"
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
  return {queue, [last] { return last; }, allowed, {}, {}};
}

TEST(Health, BrokenLimitsMakeItUnhealthyNamingTheQueueAndTheField) {
  Health::Loop partner = loop_at("partner", t0);
  partner.claim_problem = [] {
    return std::string("its limits are broken: emq:{partner}:meta max_active must be an integer in 1..1000000");
  };
  Health h({loop_at("emails", t0), partner}, [] { return std::string(); });
  HealthVerdict v = h.check(t0 + seconds(1));
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason,
            "queue partner claims nothing, its limits are broken: emq:{partner}:meta max_active must be an "
            "integer in 1..1000000");
  EXPECT_TRUE(h.loops(t0 + seconds(1)).healthy) << "no reason for the watchdog to restart the daemon";
}

TEST(Health, OkWhileTheServerAnswersAndEveryLoopTurns) {
  Health h({loop_at("emails", t0), loop_at("thumbs", t0 - seconds(2))}, [] { return std::string(); });
  HealthVerdict v = h.check(t0 + seconds(1));
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.reason, "ok");
}

TEST(Health, AStalledLoopIsUnhealthyAndNamed) {
  Health h({loop_at("emails", t0), loop_at("thumbs", t0 - seconds(10))}, [] { return std::string(); });
  HealthVerdict v = h.check(t0 + seconds(1));
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "claim loop not turning: queue thumbs (11.0 s, limit 6.0 s)");
  EXPECT_EQ(v.reason.find('\n'), std::string::npos) << "one line";
}

TEST(Health, EveryStalledLoopIsNamed) {
  Health h({loop_at("a", t0 - seconds(7)), loop_at("b", t0), loop_at("c", t0 - seconds(30))},
           [] { return std::string(); });
  EXPECT_EQ(h.check(t0).reason, "claim loop not turning: queue a (7.0 s, limit 6.0 s), queue c (30.0 s, limit 6.0 s)");
}

TEST(Health, TheLimitItselfIsStillHealthy) {
  Health h({loop_at("emails", t0, seconds(6))}, [] { return std::string(); });
  EXPECT_TRUE(h.check(t0 + seconds(6)).healthy);
  EXPECT_FALSE(h.check(t0 + seconds(6) + milliseconds(1)).healthy);
}

TEST(Health, AHandlerThatCannotStartIsUnhealthyNamingTheQueueButNotForTheWatchdog) {
  Health::Loop thumbs = loop_at("thumbs", t0);
  thumbs.handler_problem = [] { return std::string("no pool process is up: pool process 7 exited"); };
  Health h({loop_at("emails", t0), thumbs}, [] { return std::string(); });
  HealthVerdict v = h.check(t0);
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason,
            "queue thumbs claims nothing, its handler cannot start: no pool process is up: pool process 7 exited");
  EXPECT_TRUE(h.loops(t0).healthy) << "a restart does not mend a bad deploy";
}

TEST(Health, TheServerDownIsUnhealthyEvenWithLoopsTurning) {
  Health h({loop_at("emails", t0)}, [] { return std::string("the server does not answer"); });
  HealthVerdict v = h.check(t0);
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "the server does not answer");
}

TEST(Health, TheServerDownAndAStalledLoopAreBothSaid) {
  Health h({loop_at("emails", t0 - seconds(20))}, [] { return std::string("the server does not answer"); });
  EXPECT_EQ(h.check(t0).reason,
            "the server does not answer; claim loop not turning: queue emails (20.0 s, limit 6.0 s)");
}

TEST(Health, TheServerFlagIsReadAtEachCheck) {
  std::atomic<bool> up{true};
  Health h({loop_at("emails", t0)},
           [&] { return up.load() ? std::string() : std::string("the server does not answer"); });
  EXPECT_TRUE(h.check(t0).healthy);
  up = false;
  EXPECT_FALSE(h.check(t0).healthy);
  up = true;
  EXPECT_TRUE(h.check(t0).healthy);
}

TEST(Health, LivenessLooksAtTheLoopsOnly) {
  // The watchdog's question: a server outage is ridden out, not a reason for
  // systemd to kill the daemon and its running jobs.
  Health h({loop_at("emails", t0)}, [] { return std::string("the server does not answer"); });
  EXPECT_TRUE(h.loops(t0).healthy);
  Health stuck({loop_at("emails", t0 - seconds(60))}, [] { return std::string(); });
  EXPECT_FALSE(stuck.loops(t0).healthy);
  EXPECT_NE(stuck.loops(t0).reason.find("queue emails"), std::string::npos);
}

TEST(Health, NoQueuesIsHealthyWhileTheServerAnswers) {
  Health h({}, [] { return std::string(); });
  EXPECT_TRUE(h.check(t0).healthy);
}

// A handler that completes every job at once.
class CompleteAtOnce : public Handler {
 public:
  Outcome run(const Job&, const StopToken&) override { return {Outcome::Verdict::Complete, "ok", ""}; }
};

TEST(Health, ARealClaimLoopIsHealthyWhileItRunsAndStallsOnceItStops) {
  test::ValkeyServer server;
  QueueConfig q;
  q.name = "health_loop";
  q.poll_max_ms = 100;
  Metrics metrics({q.name}, "test");
  CompleteAtOnce handler;
  ClaimLoop loop(q, server.options(), handler, metrics);
  loop.start();
  const milliseconds call_limit(1500);
  Health h({Health::watch(loop, call_limit)}, [] { return std::string(); });

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

// One dropped connection (CLIENT KILL of every emqd connection) is not an
// outage: the connections come back at once, and within the documented
// grace /healthz stays 200 and emq_valkey_up stays 1, the two agreeing at
// every probe. Before, the sampler's one failed read made /healthz 503 for
// a second while the gauge, set by the claim loops, said 1.
TEST(HealthLive, OneDroppedConnectionIsNoOutage) {
  test::ValkeyServer server;
  Executor x(server.options());
  HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  const int port = HttpServer(std::move(p)).port();
  test::EmqdProcess d("valkey:\n  url: " + server.url() +
                      "\n  connect_timeout_ms: 2000\n  command_timeout_ms: 5000\nmetrics:\n  listen: 127.0.0.1:" +
                      std::to_string(port) +
                      "\nlog:\n  level: info\nqueues:\n  - name: killed\n    handler:\n      type: exec\n"
                      "      command: [\"" EMQ_TEST_HANDLERS "/ok.sh\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(test::wait_for([&] { return test::http_get(port, "/healthz").status == 200; }, seconds(10)));

  int probes = 0, unhealthy = 0, gauge_down = 0;
  std::string last_body;
  for (int kill = 0; kill < 5; ++kill) {
    // The killing connection itself is spared: every emqd one goes.
    Reply r = x.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    ASSERT_EQ(r.type, Reply::Type::Integer) << r.str;
    const auto until = std::chrono::steady_clock::now() + milliseconds(1500);
    while (std::chrono::steady_clock::now() < until) {
      test::HttpAnswer h = test::http_get(port, "/healthz");
      const std::string page = test::http_get(port, "/metrics").body;
      ++probes;
      if (h.status != 200) {
        ++unhealthy;
        last_body = h.body;
      }
      gauge_down += ("\n" + page).find("\nemq_valkey_up 1\n") == std::string::npos;
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  EXPECT_EQ(unhealthy, 0) << "of " << probes << " probes; last: " << last_body << d.log();
  EXPECT_EQ(gauge_down, 0) << "of " << probes << " scrapes";
  enqueue(x, QueueKeys("killed"), mint_job_id(), "p");
  EXPECT_TRUE(test::wait_for([&] { return stats(x, QueueKeys("killed")).counters["completed"] == 1; }, seconds(10)));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::daemon
