// Schedules with real servers and the real emqd binary: exactly one job
// per tick however many daemons run the schedule, one of them SIGKILLed
// halfway, daemons with their clocks an hour off firing the server's ticks,
// no burst after all were stopped, and overlap: skip never leaving two jobs
// unfinished.
//
// The clocks an hour off are the test's own LD_PRELOAD shim
// (clock_offset.c), not libfaketime, which hangs emqd at start.
//
// The ledger: a watcher polls the schedule's marker (emq:{q}:cron, name ->
// <fire_ms>:<id>), which every fire sets, much faster than the ticks; every
// row in the queue must be one marker value's job, every marker value one
// row, and the ticks one second apart with no gap.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "echomq/connection.h"
#include "echomq/executor.h"
#include "echomq/transitions.h"
#include "command_log.h"
#include "emqd_process.h"
#include "schedule_e2e.h"
#include "schedule_ledger.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

using namespace std::chrono_literals;

// Polls the marker in a thread and keeps every value it took.
class MarkerWatch {
 public:
  MarkerWatch(const ValkeyServer& server, std::string queue, std::string name)
      : conn_(Connection::open(server.options())), key_("emq:{" + queue + "}:cron"), name_(std::move(name)) {
    thread_ = std::thread([this] { loop(); });
  }
  ~MarkerWatch() { stop(); }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // fire_ms -> id
  std::map<std::int64_t, std::string> fires() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fires_;
  }
  // A marker that named a tick after the server's time when it was read.
  int future_ticks() const { return future_; }

 private:
  void loop() {
    while (!stopping_) {
      Reply r = conn_.command({"HGET", key_, name_});
      if (r.type == Reply::Type::String) {
        std::size_t colon = r.str.find(':');
        std::int64_t fire = std::stoll(r.str.substr(0, colon));
        if (fire > server_ms(conn_) + 5) ++future_;
        std::lock_guard<std::mutex> lock(mutex_);
        auto [it, fresh] = fires_.emplace(fire, r.str.substr(colon + 1));
        if (!fresh && it->second != r.str.substr(colon + 1)) conflicts_.push_back(r.str);
      }
      std::this_thread::sleep_for(10ms);
    }
  }

  Connection conn_;
  std::string key_;
  std::string name_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::int64_t, std::string> fires_;
  std::vector<std::string> conflicts_;
  std::atomic<int> future_{0};
};

// The ticks a daemon's log says it enqueued.
std::set<std::int64_t> fired_in_log(const std::string& log) {
  std::set<std::int64_t> out;
  for (const auto& [tick, id] : fires_logged(log)) out.insert(tick);
  return out;
}

// A daemon whose wall clock is `offset_s` off, by the shim of clock_offset.c.
std::vector<std::string> clock_off(int offset_s) {
  return {std::string("LD_PRELOAD=") + EMQ_CLOCK_OFFSET_SHIM, "EMQ_TEST_CLOCK_OFFSET_S=" + std::to_string(offset_s)};
}

// A daemon's wall clock less the server's, in seconds: the stamp of its
// "ready:" line (2026-12-05T03:35:04.822+00:00) against the server's TIME
// read after the line was written, so a second or two short.
std::int64_t log_clock_skew_s(const EmqdProcess& daemon, Connection& c) {
  const std::int64_t now_s = server_ms(c) / 1000;
  const std::string log = daemon.log();
  const std::size_t ready = log.find(" ready:");
  const std::size_t newline = ready == std::string::npos ? std::string::npos : log.rfind('\n', ready);
  const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  const std::string line = ready == std::string::npos ? "" : log.substr(start, ready - start);
  std::smatch m;
  std::tm tm{};
  if (!std::regex_match(line, m, std::regex(R"((.{19})\.[0-9]{3}([+-])([0-9]{2}):([0-9]{2}) .*)")) ||
      strptime(m[1].str().c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
    ADD_FAILURE() << "no stamped ready: line in\n" << log;
    return std::numeric_limits<int>::min();  // far from any skew expected
  }
  const std::int64_t zone_s =
      (m[2].str() == "-" ? -1 : 1) * (std::stoll(m[3].str()) * 3600 + std::stoll(m[4].str()) * 60);
  return static_cast<std::int64_t>(timegm(&tm)) - zone_s - now_s;
}

// What the daemons' logs say they fired is the ledger's ticks, each once.
void expect_logs_fired_the_ledger(const std::map<std::int64_t, std::string>& fires, const std::set<std::string>& rows,
                                  const std::vector<std::string>& logs) {
  std::set<std::int64_t> ledger;
  for (const auto& [tick, id] : fires) ledger.insert(tick);
  std::size_t fired = 0;
  for (const std::string& log : logs) {
    for (std::int64_t tick : fired_in_log(log)) {
      EXPECT_EQ(ledger.count(tick), 1u) << tick << " fired but not in the ledger";
      ++fired;
    }
  }
  EXPECT_EQ(fired, rows.size());
}

TEST(SchedulesE2E, ThreeDaemonsOneKilledHalfwayFireEachTickOnce) {
  ValkeyServer server;
  const std::string yaml = schedule_config(server, "  - { name: beat, queue: ticks, every: 1s }\n");
  MarkerWatch watch(server, "ticks", "beat");
  EmqdProcess a(yaml);
  EmqdProcess b(yaml);
  EmqdProcess c(yaml);
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  ASSERT_TRUE(c.wait_ready()) << c.log();
  ASSERT_TRUE(wait_for([&] { return watch.fires().size() >= 10; }, 30s));
  b.signal(SIGKILL);
  ASSERT_TRUE(b.wait_exit(10s));
  const std::size_t at_kill = watch.fires().size();
  ASSERT_TRUE(wait_for([&] { return watch.fires().size() >= at_kill + 10; }, 30s));
  a.signal(SIGTERM);
  c.signal(SIGTERM);
  ASSERT_EQ(a.wait_exit(30s), 0) << a.log();
  ASSERT_EQ(c.wait_exit(30s), 0) << c.log();
  watch.stop();

  const auto fires = watch.fires();
  const auto rows = scheduled_rows(server, "ticks", "beat");
  expect_one_job_per_tick(fires, rows);
  EXPECT_EQ(watch.future_ticks(), 0);
  expect_logs_fired_the_ledger(fires, rows, {a.log(), b.log(), c.log()});
  EXPECT_GE(rows.size(), 20u);
  std::printf("ledger: %zu ticks, %zu rows; fired by a %zu, b %zu (killed), c %zu\n", fires.size(), rows.size(),
              fired_in_log(a.log()).size(), fired_in_log(b.log()).size(), fired_in_log(c.log()).size());
}

// The tick times are the server's: two daemons with their wall clocks an
// hour ahead and an hour behind fire every tick on the server's time while
// they run alone (a daemon reading its own clock would fire an hour early,
// or find every tick past grace), and a daemon with a true clock joining
// them adds no tick.
TEST(SchedulesE2E, DaemonsWithTheirClocksAnHourOffFireTheServersTicks) {
  ValkeyServer server;
  Connection conn = Connection::open(server.options());
  const std::string yaml = schedule_config(server, "  - { name: beat, queue: ticks, every: 1s }\n");
  MarkerWatch watch(server, "ticks", "beat");
  const std::int64_t started = server_ms(conn);
  EmqdProcess ahead(yaml, {}, clock_off(3600));
  EmqdProcess behind(yaml, {}, clock_off(-3600));
  ASSERT_TRUE(ahead.wait_ready()) << ahead.log();
  ASSERT_TRUE(behind.wait_ready()) << behind.log();
  // The shim is in: each log is stamped an hour off the server's clock.
  EXPECT_NEAR(log_clock_skew_s(ahead, conn), 3600, 30) << ahead.log();
  EXPECT_NEAR(log_clock_skew_s(behind, conn), -3600, 30) << behind.log();
  ASSERT_TRUE(wait_for([&] { return watch.fires().size() >= 8; }, 30s)) << ahead.log() << behind.log();
  const std::size_t alone = watch.fires().size();
  EmqdProcess true_clock(yaml);
  ASSERT_TRUE(true_clock.wait_ready()) << true_clock.log();
  EXPECT_NEAR(log_clock_skew_s(true_clock, conn), 0, 30) << true_clock.log();
  ASSERT_TRUE(wait_for([&] { return watch.fires().size() >= alone + 8; }, 30s)) << true_clock.log();
  for (EmqdProcess* d : {&ahead, &behind, &true_clock}) d->signal(SIGTERM);
  for (EmqdProcess* d : {&ahead, &behind, &true_clock}) ASSERT_EQ(d->wait_exit(30s), 0) << d->log();
  watch.stop();

  const auto fires = watch.fires();
  const auto rows = scheduled_rows(server, "ticks", "beat");
  expect_one_job_per_tick(fires, rows);
  EXPECT_EQ(watch.future_ticks(), 0);
  // The first tick is the server's latest within grace (1m) of the start.
  EXPECT_GE(fires.begin()->first, started - 60000);
  EXPECT_LE(fires.begin()->first, started + 30000);
  expect_logs_fired_the_ledger(fires, rows, {ahead.log(), behind.log(), true_clock.log()});
  std::printf(
      "ledger: %zu ticks, %zu rows (%zu before the true clock joined); fired by ahead %zu, behind %zu, "
      "true %zu\n",
      fires.size(), rows.size(), alone, fired_in_log(ahead.log()).size(), fired_in_log(behind.log()).size(),
      fired_in_log(true_clock.log()).size());
}

TEST(SchedulesE2E, AfterAllStoppedFiveTicksOneCatchUpAndTheRestMissed) {
  ValkeyServer server;
  Connection conn = Connection::open(server.options());
  const std::string yaml = schedule_config(server, "  - { name: beat, queue: ticks, every: 1s, misfire_grace: 2s }\n");
  std::int64_t last_before = 0;
  {
    EmqdProcess a(yaml);
    EmqdProcess b(yaml);
    ASSERT_TRUE(a.wait_log("fired the tick", 30s) || b.wait_log("fired the tick", 1s)) << a.log();
    a.signal(SIGTERM);
    b.signal(SIGTERM);
    ASSERT_EQ(a.wait_exit(30s), 0);
    ASSERT_EQ(b.wait_exit(30s), 0);
    std::string marker = conn.command({"HGET", "emq:{ticks}:cron", "beat"}).str;
    last_before = std::stoll(marker.substr(0, marker.find(':')));
  }
  const std::size_t rows_before = scheduled_rows(server, "ticks", "beat").size();
  // Stopped for more than five ticks, by the server's clock.
  ASSERT_TRUE(wait_for([&] { return server_ms(conn) >= last_before + 5500; }, 30s));

  MarkerWatch watch(server, "ticks", "beat");
  EmqdProcess a(yaml);
  EmqdProcess b(yaml);
  ASSERT_TRUE(wait_for([&] { return !watch.fires().empty(); }, 30s));
  // The watch saw the old marker first.
  ASSERT_TRUE(wait_for([&] { return watch.fires().size() >= 4; }, 30s));
  const std::int64_t first_after = std::next(watch.fires().begin())->first;
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  ASSERT_EQ(a.wait_exit(30s), 0);
  ASSERT_EQ(b.wait_exit(30s), 0);
  watch.stop();

  const std::int64_t gap_ticks = (first_after - last_before) / 1000 - 1;
  // Stopped 5.5 ticks: five never fired, the latest of them fires late.
  EXPECT_GE(gap_ticks, 4);
  const auto fires = watch.fires();
  EXPECT_EQ(fires.begin()->first, last_before);
  std::set<std::string> rows = scheduled_rows(server, "ticks", "beat");
  EXPECT_EQ(rows.size(), rows_before + fires.size() - 1) << "a burst of catch-ups";
  // The catch-up tick was due before any daemon's first round, by the
  // server's clock: it fired late, within grace.
  std::smatch m;
  std::string logs = a.log() + b.log();
  ASSERT_TRUE(std::regex_search(logs, m, std::regex("([0-9]+) ticks missed"))) << logs;
  EXPECT_EQ(std::stoll(m[1].str()), gap_ticks) << logs;
}

// The daemons of OverlapSkip... and AUniqueKey...: queue slow, four slots,
// jobs of 2.5 s kept completed, and one schedule `beat` every second with
// `more` (overlap or a unique key).
std::string slow_beat_config(const ValkeyServer& server, const std::string& more) {
  return "valkey: { url: \"" + server.url() +
         "\" }\n"
         "metrics: { listen: \"\" }\n"
         "queues:\n"
         "  - name: slow\n"
         "    concurrency: 4\n"
         "    keep_completed_s: 600\n"
         "    handler: { type: exec, command: [/bin/sleep, \"2.5\"] }\n"
         "schedules:\n"
         "  - { name: beat, queue: slow, every: 1s, " +
         more + " }\n";
}

// Waits until queue slow completed three jobs; the most jobs it had
// unfinished (pending, active or delayed) at once meanwhile. One MULTI:
// three ZCARDs apart counted a job claimed between them twice, once
// pending and once active (CI saw 2).
int most_unfinished_until_three_completed(const ValkeyServer& server, const EmqdProcess& a) {
  Connection c = Connection::open(server.options());
  int most = 0;
  auto completed = [&] {
    std::int64_t n = 0;
    for (const Reply& k : c.command({"KEYS", "emq:{slow}:job:*"}).elements)
      if (c.command({"HGET", k.str, "state"}).str == "completed") ++n;
    return n;
  };
  EXPECT_TRUE(wait_for(
      [&] {
        std::vector<Reply> r = c.pipeline({{"MULTI"},
                                           {"ZCARD", "emq:{slow}:pending"},
                                           {"ZCARD", "emq:{slow}:active"},
                                           {"ZCARD", "emq:{slow}:delayed"},
                                           {"EXEC"}});
        std::int64_t n = 0;
        for (const Reply& e : r.back().elements) n += e.integer;
        most = std::max(most, static_cast<int>(n));
        return completed() >= 3;
      },
      60s))
      << a.log();
  return most;
}

TEST(SchedulesE2E, OverlapSkipNeverLeavesTwoJobsUnfinished) {
  ValkeyServer server;
  const std::string yaml = slow_beat_config(server, "overlap: skip");
  EmqdProcess a(yaml);
  EmqdProcess b(yaml);
  EXPECT_LE(most_unfinished_until_three_completed(server, a), 1);
  EXPECT_NE((a.log() + b.log()).find("skipped the tick"), std::string::npos);
}

// A schedule with a unique key in finished mode: a tick whose key is held
// enqueues nothing, whoever enqueued the job that holds it (here a
// producer's, before the daemons start). Jobs last 2.5 s and ticks come
// every second, with overlap allow: the key alone keeps them one at a time.
TEST(SchedulesE2E, AUniqueKeyNeverRunsATickBesideTheLastJobWhoeverEnqueuedIt) {
  ValkeyServer server;
  const std::string yaml = slow_beat_config(server, "unique: beat");
  Executor x(server.options());
  EnqueueOptions by_hand;
  by_hand.job.unique = UniqueKey{"beat", std::nullopt, 0};
  ASSERT_EQ(enqueue(x, QueueKeys("slow"), "JOB_by_hand", "x", by_hand), EnqueueResult::Enqueued);
  EmqdProcess a(yaml);
  EmqdProcess b(yaml);
  EXPECT_LE(most_unfinished_until_three_completed(server, a), 1) << "two jobs of the key were unfinished at once";
  Connection c = Connection::open(server.options());
  EXPECT_EQ(c.command({"HGET", "emq:{slow}:job:JOB_by_hand", "state"}).str, "completed");
  EXPECT_NE((a.log() + b.log()).find("unique key beat is held by"), std::string::npos) << a.log() << b.log();
}

// The native executor runs the six core transitions as module commands;
// enqueue_cron has none and goes as a script. Two daemons on a server with
// the module fire one job per tick, which they then claim and complete
// natively. The server's log of the commands it ran shows both paths: a
// call of enqueue_cron's own script for every job the schedule made, and
// the claims as EMQ.CLAIM, never as claim's script.
TEST(SchedulesE2E, ScheduleFiresAsAScriptBesideTheNativeExecutor) {
  ValkeyServer::Options o;
  o.load_module = true;
  ValkeyServer server(o);
  const std::string yaml = "valkey: { url: \"" + server.url() +
                           "\", executor: native }\n"
                           "metrics: { listen: \"\" }\n"
                           "queues:\n"
                           "  - name: ticks\n"
                           "    keep_completed_s: 600\n"
                           "    handler: { type: exec, command: [/bin/true] }\n"
                           "schedules:\n"
                           "  - { name: beat, queue: ticks, every: 1s }\n";
  Connection c = Connection::open(server.options());
  // The rows the schedule made, and those of them completed.
  auto rows = [&](bool only_completed) {
    std::set<std::string> out;
    for (const Reply& k : c.command({"KEYS", "emq:{ticks}:job:*"}).elements) {
      if (c.command({"HGET", k.str, "schedule"}).str != "beat") continue;
      if (only_completed && c.command({"HGET", k.str, "state"}).str != "completed") continue;
      out.insert(k.str.substr(std::string("emq:{ticks}:job:").size()));
    }
    return out;
  };
  CommandLog log(server.options());
  const std::string cron_sha = log.sha_of(Script::EnqueueCron), claim_sha = log.sha_of(Script::Claim);
  EmqdProcess a(yaml);
  EmqdProcess b(yaml);
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  ASSERT_TRUE(wait_for([&] { return rows(true).size() >= 6; }, 60s)) << a.log() << b.log();
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  ASSERT_EQ(a.wait_exit(30s), 0) << a.log();
  ASSERT_EQ(b.wait_exit(30s), 0) << b.log();

  EXPECT_NE(a.log().find("executor native"), std::string::npos) << a.log();
  EXPECT_NE(b.log().find("executor native"), std::string::npos) << b.log();
  expect_one_job_per_tick(one_fire_per_tick({a.log(), b.log()}), rows(false));
  // Each tick: both daemons call enqueue_cron, one of them makes the job.
  const std::size_t made = rows(false).size();
  EXPECT_GE(log.calls("EVALSHA", {cron_sha}).size(), made) << "enqueue_cron's script ran fewer times than jobs it made";
  EXPECT_GE(log.calls("EMQ.CLAIM").size(), 1u) << "the native executor claims through the module";
  EXPECT_GE(log.calls("EMQ.COMPLETE").size(), rows(true).size());
  EXPECT_EQ(log.calls("EVALSHA", {claim_sha}).size(), 0u) << "a claim went as a script on the native executor";
}

}  // namespace
}  // namespace echomq::test
