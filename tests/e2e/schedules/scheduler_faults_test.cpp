// The scheduler when something is off, with the real emqd: a broken marker
// or a cron hash of the wrong type stops only its own schedule (named, once);
// misfire_grace: 0s fires every tick it waits for and none missed while
// stopped; a marker ahead of the server's clock holds its schedule, said
// once, until the clock passes it or the marker is deleted; a new schedule
// first fires a tick at or after it appeared.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "echomq/connection.h"
#include "emqd_process.h"
#include "schedule_e2e.h"
#include "schedule_ledger.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

using namespace std::chrono_literals;

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The fire time of a schedule's marker, or -1 while it has none.
std::int64_t marker_ms(Connection& c, const std::string& queue, const std::string& name) {
  Reply r = c.command({"HGET", "emq:{" + queue + "}:cron", name});
  return r.type == Reply::Type::String ? std::stoll(r.str.substr(0, r.str.find(':'))) : -1;
}

// Schedules before and after the broken ones, in another queue and in the
// same one: every sound one fires and is published; each broken one is
// named once, with what is broken; mended, it fires.
TEST(SchedulerFaults, ABrokenMarkerOrCronHashStopsOnlyItsOwnScheduleNamedOnce) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{alpha}:cron", "broken", "garbage"});
  c.command({"SET", "emq:{beta}:cron", "not a hash"});
  EmqdProcess d(schedule_config(server,
                                "  - { name: broken, queue: alpha, every: 1s }\n"
                                "  - { name: typed, queue: beta, every: 1s }\n"
                                "  - { name: fine, queue: alpha, every: 1s }\n"
                                "  - { name: after, queue: gamma, every: 1s }\n"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  // Three fires of each sound schedule: three rounds past both broken ones.
  ASSERT_TRUE(wait_for(
      [&] {
        return scheduled_rows(server, "alpha", "fine").size() >= 3 &&
               scheduled_rows(server, "gamma", "after").size() >= 3;
      },
      20s))
      << d.log();
  for (const auto& [queue, name] :
       {std::pair{"alpha", "broken"}, {"beta", "typed"}, {"alpha", "fine"}, {"gamma", "after"}})
    EXPECT_EQ(c.command({"HEXISTS", std::string("emq:{") + queue + "}:schedules", name}).integer, 1) << name;
  const std::string log = d.log();
  EXPECT_EQ(count_of(log, "schedule broken of queue alpha: its marker"), 1u) << log;
  EXPECT_NE(log.find("'garbage' is not <fire_ms>:<job id>"), std::string::npos) << log;
  EXPECT_EQ(count_of(log, "schedule typed of queue beta:"), 1u) << log;
  EXPECT_NE(log.find("WRONGTYPE"), std::string::npos) << log;
  EXPECT_TRUE(scheduled_rows(server, "alpha", "broken").empty());
  EXPECT_EQ(c.command({"GET", "emq:{beta}:cron"}).str, "not a hash") << "nothing written over it";

  // Mended (the marker deleted, the key removed): both fire.
  c.command({"HDEL", "emq:{alpha}:cron", "broken"});
  c.command({"DEL", "emq:{beta}:cron"});
  EXPECT_TRUE(wait_for([&] { return !scheduled_rows(server, "alpha", "broken").empty(); }, 20s)) << d.log();
  EXPECT_TRUE(wait_for([&] { return !scheduled_rows(server, "beta", "typed").empty(); }, 20s)) << d.log();
  EXPECT_TRUE(d.wait_log("schedule broken of queue alpha: runs again", 5s)) << d.log();
}

// misfire_grace: 0s: each tick fires as the running daemon wakes for it;
// restarted after ticks went by, it fires none of them late.
TEST(SchedulerFaults, GraceZeroFiresEveryTickWaitedForAndNoneMissedWhileStopped) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  const std::string yaml = schedule_config(server, "  - { name: beat, queue: ticks, every: 1s, misfire_grace: 0s }\n");
  std::int64_t last = 0;
  {
    EmqdProcess d(yaml);
    ASSERT_TRUE(d.wait_ready()) << d.log();
    ASSERT_TRUE(wait_for([&] { return scheduled_rows(server, "ticks", "beat").size() >= 3; }, 15s)) << d.log();
    d.signal(SIGTERM);
    ASSERT_EQ(d.wait_exit(30s), 0) << d.log();
    // (Not "no gap": a wake more than kOnTimeMs late, on a loaded host,
    // rightly misses a tick at grace 0.)
    EXPECT_EQ(fires_logged(d.log()).size(), scheduled_rows(server, "ticks", "beat").size());
    last = marker_ms(c, "ticks", "beat");
  }
  // Stopped for two ticks and more.
  ASSERT_TRUE(wait_for([&] { return server_ms(c) >= last + 2500; }, 10s));
  const std::int64_t restarted = server_ms(c);
  EmqdProcess d(yaml);
  ASSERT_TRUE(d.wait_log("fired the tick", 15s)) << d.log();
  const auto fires = fires_logged(d.log());
  ASSERT_FALSE(fires.empty());
  EXPECT_GE(fires.begin()->first, restarted) << "a tick missed while stopped fired late:\n" << d.log();
  EXPECT_NE(d.log().find("ticks missed"), std::string::npos) << d.log();
}

// A marker an hour ahead (a hand edit here; a server clock stepped back
// alike): the daemon says so once, naming the schedule and the marker,
// fires nothing, and fires again once the marker is deleted; an edit made
// while it runs is caught the same way.
TEST(SchedulerFaults, AMarkerAheadOfTheServersClockHoldsItsScheduleSaidOnce) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  const std::string ahead = std::to_string(server_ms(c) + 3600 * 1000) + ":JOB_future";
  c.command({"HSET", "emq:{ticks}:cron", "beat", ahead});
  EmqdProcess d(schedule_config(server, "  - { name: beat, queue: ticks, every: 1s }\n"));
  ASSERT_TRUE(d.wait_log("ahead of the server's clock", 15s)) << d.log();
  EXPECT_NE(d.log().find("schedule beat of queue ticks: its marker " + ahead), std::string::npos) << d.log();
  // Held past a few rounds: said once, nothing fired, the marker kept.
  const std::int64_t held_at = server_ms(c);
  ASSERT_TRUE(wait_for([&] { return server_ms(c) >= held_at + 3000; }, 10s));
  EXPECT_EQ(count_of(d.log(), "ahead of the server's clock"), 1u) << d.log();
  EXPECT_TRUE(scheduled_rows(server, "ticks", "beat").empty());
  EXPECT_EQ(c.command({"HGET", "emq:{ticks}:cron", "beat"}).str, ahead);

  c.command({"HDEL", "emq:{ticks}:cron", "beat"});
  ASSERT_TRUE(wait_for([&] { return scheduled_rows(server, "ticks", "beat").size() >= 2; }, 20s)) << d.log();

  const std::string again = std::to_string(server_ms(c) + 7200 * 1000) + ":JOB_later";
  c.command({"HSET", "emq:{ticks}:cron", "beat", again});
  ASSERT_TRUE(wait_for([&] { return count_of(d.log(), "ahead of the server's clock") == 2; }, 15s)) << d.log();
  EXPECT_NE(d.log().find("its marker " + again), std::string::npos) << d.log();
  const std::size_t rows = scheduled_rows(server, "ticks", "beat").size();
  const std::int64_t second_hold = server_ms(c);
  ASSERT_TRUE(wait_for([&] { return server_ms(c) >= second_hold + 3000; }, 10s));
  EXPECT_EQ(scheduled_rows(server, "ticks", "beat").size(), rows);
  EXPECT_EQ(count_of(d.log(), "ahead of the server's clock"), 2u) << d.log();
}

// A schedule no daemon ran before fires first the first tick at or after
// it appeared, not the tick before it (every 5 s, the daemon started just
// after a tick: that tick is older than the schedule).
TEST(SchedulerFaults, ANewScheduleFirstFiresATickAtOrAfterItAppeared) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  ASSERT_TRUE(wait_for([&] { return server_ms(c) % 5000 >= 100 && server_ms(c) % 5000 < 600; }, 10s));
  const std::int64_t started = server_ms(c);
  EmqdProcess d(schedule_config(server, "  - { name: beat, queue: ticks, every: 5s }\n"));
  ASSERT_TRUE(d.wait_log("fired the tick", 15s)) << d.log();
  const auto fires = fires_logged(d.log());
  ASSERT_FALSE(fires.empty());
  EXPECT_GE(fires.begin()->first, started) << d.log();
  EXPECT_LE(fires.begin()->first, started + 10000) << d.log();
}

}  // namespace
}  // namespace echomq::test
