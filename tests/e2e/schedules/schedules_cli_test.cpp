// emq schedules and emq schedules fire against a real server: the listing
// beside the marker, a fire through enqueue_cron, and what another writer
// broke (bytes that are not UTF-8, a definition that cannot be read, a
// marker ahead of the server's clock) said plainly, never a JSON crash.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "echomq/connection.h"
#include "emqd_process.h"
#include "schedule_e2e.h"
#include "valkey_server.h"

namespace echomq::test {
namespace {

const std::string kEverySecond =
    R"({"every_ms":1000,"lane":0,"misfire_grace_ms":60000,"overlap":"allow","timezone":"UTC"})";

RunResult emq(const ValkeyServer& server, std::vector<std::string> args) {
  args.insert(args.begin(), {emq_binary(), "--url", server.url()});
  return run_program(args);
}

// The listed schedule named `name` (by its exact bytes: name_hex when
// the name is not UTF-8), or null.
nlohmann::json listed(const nlohmann::json& all, const std::string& key, const std::string& value) {
  for (const nlohmann::json& s : all) {
    if (s.contains(key) && s[key] == value) return s;
  }
  return nullptr;
}

// emq schedules and emq schedules fire, on a definition as a daemon
// publishes it.
TEST(SchedulesCli, FireEnqueuesThroughTheMarkerAndTheListingShowsIt) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{reports}:schedules", "nightly",
             R"({"cron":"30 2 * * *","lane":0,"misfire_grace_ms":60000,"overlap":"skip","timezone":"Europe/Berlin"})"});
  RunResult fired =
      run_program({emq_binary(), "--url", server.url(), "schedules", "fire", "reports", "nightly", "--payload", "p"});
  ASSERT_EQ(fired.code, 0) << fired.err;
  const std::string id = fired.out.substr(0, fired.out.find('\n'));
  EXPECT_EQ(c.command({"HGET", "emq:{reports}:job:" + id, "schedule"}).str, "nightly");
  // overlap: skip, and that job is pending: a second fire is held.
  RunResult again = run_program({emq_binary(), "--url", server.url(), "schedules", "fire", "reports", "nightly"});
  EXPECT_EQ(again.code, 4) << again.err;
  EXPECT_EQ(run_program({emq_binary(), "--url", server.url(), "schedules", "fire", "reports", "nope"}).code, 1);

  RunResult listed = run_program({emq_binary(), "--url", server.url(), "schedules", "reports", "--json"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("\"last_job\": \"" + id + "\""), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("\"missed\": 0"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("\"next_fire_ms\": 1"), std::string::npos) << listed.out;
  RunResult table = run_program({emq_binary(), "--url", server.url(), "schedules", "reports"});
  EXPECT_NE(table.out.find("30 2 * * * Europe/Berlin"), std::string::npos) << table.out;
}

// A schedule whose definition names a unique key: each fire's job carries
// it, and a fire while the last one's job holds it enqueues nothing and
// names that job (exit 4, as a fire overlap skip holds).
TEST(SchedulesCli, AFireWhoseUniqueKeyIsHeldNamesTheHolder) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{reports}:schedules", "nightly",
             R"({"every_ms":1000,"lane":0,"misfire_grace_ms":60000,"overlap":"allow","timezone":"UTC",)"
             R"("unique":"report:nightly","unique_mode":"finished"})"});
  RunResult fired = emq(server, {"schedules", "fire", "reports", "nightly"});
  ASSERT_EQ(fired.code, 0) << fired.err;
  const std::string id = fired.out.substr(0, fired.out.find('\n'));
  EXPECT_EQ(c.command({"HGET", "emq:{reports}:job:" + id, "unique"}).str, "report:nightly");
  RunResult again = emq(server, {"schedules", "fire", "reports", "nightly"});
  EXPECT_EQ(again.code, 4) << again.err;
  EXPECT_EQ(again.out, id + "\n");
  EXPECT_EQ(again.err,
            "emq: not fired: the schedule's unique key is held by " + id + " (pending); the tick is taken\n");
  EXPECT_EQ(c.command({"ZCARD", "emq:{reports}:pending"}).integer, 1);
}

// A schedule whose definition names a group: a fire from the tool sends its
// job to the group's zset, as the daemon's own ticks do; a group that does
// not read is refused, nothing written; the listing shows each one's group.
TEST(SchedulesCli, AFireOfAGroupedScheduleGoesToItsGroupAndTheListingShowsIt) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{reports}:schedules", "nightly",
             R"({"every_ms":1000,"lane":2,"misfire_grace_ms":60000,"overlap":"allow","timezone":"UTC",)"
             R"("group":"cust.42"})",
             "broken", R"({"every_ms":1000,"group":"a b"})", "plain", kEverySecond});
  RunResult fired = emq(server, {"schedules", "fire", "reports", "nightly"});
  ASSERT_EQ(fired.code, 0) << fired.err;
  const std::string id = fired.out.substr(0, fired.out.find('\n'));
  EXPECT_EQ(c.command({"HGET", "emq:{reports}:job:" + id, "group"}).str, "cust.42");
  EXPECT_EQ(c.command({"ZSCORE", "emq:{reports}:gq:cust.42", id}).str, "2");
  EXPECT_EQ(c.command({"ZCARD", "emq:{reports}:pending"}).integer, 0);
  RunResult broken = emq(server, {"schedules", "fire", "reports", "broken"});
  EXPECT_EQ(broken.code, 3) << broken.err;
  EXPECT_NE(broken.err.find("\"group\" is not 1-128 bytes"), std::string::npos) << broken.err;
  EXPECT_EQ(c.command({"HLEN", "emq:{reports}:cron"}).integer, 1) << "only the grouped fire's marker";

  // The listing shows each schedule's group: a column of the table (- for
  // none) and "group" in --json (null for none, and for one that does not
  // read, which is said on stderr).
  RunResult table = emq(server, {"schedules", "reports"});
  ASSERT_EQ(table.code, 0) << table.err;
  std::vector<std::string> lines;
  std::istringstream in(table.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << table.out;
  const std::size_t group = lines[0].find("GROUP");
  ASSERT_NE(group, std::string::npos) << lines[0];
  EXPECT_LT(lines[0].find("DEFINITION"), group) << lines[0];
  // name -> the GROUP cell, each column read where its heading starts.
  auto cell = [](const std::string& row, std::size_t at) { return row.substr(at, row.find(' ', at) - at); };
  const std::size_t name = lines[0].find("NAME");
  std::map<std::string, std::string> shown;
  for (std::size_t i = 1; i < lines.size(); ++i) shown[cell(lines[i], name)] = cell(lines[i], group);
  EXPECT_EQ(shown, (std::map<std::string, std::string>{{"broken", "-"}, {"nightly", "cust.42"}, {"plain", "-"}}))
      << table.out;
  EXPECT_NE(table.err.find("\"group\" is not 1-128 bytes"), std::string::npos) << table.err;

  RunResult json = emq(server, {"schedules", "reports", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json all = nlohmann::json::parse(json.out);
  EXPECT_EQ(listed(all, "name", "nightly")["group"], "cust.42") << json.out;
  EXPECT_TRUE(listed(all, "name", "plain")["group"].is_null()) << json.out;
  EXPECT_TRUE(listed(all, "name", "broken")["group"].is_null()) << json.out;
}

// The listing is a table like every other of emq's: no tabs, each column
// starting where its heading does, however long the cells above it.
TEST(SchedulesCli, TheTableAlignsEachColumnUnderItsHeading) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{reports}:schedules", "nightly",
             R"({"cron":"30 2 * * *","lane":0,"misfire_grace_ms":60000,"overlap":"skip","timezone":"Europe/Berlin"})",
             "a-much-longer-schedule-name", kEverySecond});
  RunResult table = emq(server, {"schedules", "reports"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out.find('\t'), std::string::npos) << table.out;
  std::vector<std::string> lines;
  std::istringstream in(table.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << table.out;
  const std::size_t definition = lines[0].find("DEFINITION"), missed = lines[0].find("MISSED");
  ASSERT_NE(definition, std::string::npos) << lines[0];
  ASSERT_NE(missed, std::string::npos) << lines[0];
  for (const std::string& row : {lines[1], lines[2]}) {
    const bool cron = row.find("nightly") != std::string::npos;
    EXPECT_EQ(row.find(cron ? "30 2 * * *" : "every"), definition) << table.out;
    // MISSED is a number, right-aligned under its heading: the rows end where it does.
    EXPECT_EQ(row.size(), missed + std::string("MISSED").size()) << table.out;
  }
}

// A name, a job id in a marker or a definition that is not UTF-8 (another
// writer's) is shown with its exact bytes in hex beside it and said to be
// wrong; the listing still exits 0 (it was "unexpected failure: json", exit 3).
TEST(SchedulesCli, JsonShowsBytesThatAreNotUtf8InHexAndSaysWhatIsWrong) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{odd}:schedules", "beat", kEverySecond,
             "be\xff"
             "at",
             kEverySecond, "late", "{\"every_ms\":\"\xfe\"}"});
  c.command({"HSET", "emq:{odd}:cron", "beat", "1000:JOB_\xff\xfe"});
  RunResult r = emq(server, {"schedules", "odd", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("unexpected failure"), std::string::npos) << r.err;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all.size(), 3u) << r.out;
  const nlohmann::json beat = listed(all, "name", "beat");
  ASSERT_FALSE(beat.is_null()) << r.out;
  EXPECT_EQ(beat["last_job_hex"], "4a4f425ffffe") << r.out;
  EXPECT_EQ(beat["last_fire_ms"], 1000);
  const nlohmann::json odd = listed(all, "name_hex", "6265ff6174");
  ASSERT_FALSE(odd.is_null()) << r.out;
  EXPECT_NE(odd["problem"].get<std::string>().find("not a schedule name"), std::string::npos) << r.out;
  const nlohmann::json late = listed(all, "name", "late");
  ASSERT_FALSE(late.is_null()) << r.out;
  EXPECT_NE(late["problem"].get<std::string>().find("not UTF-8"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("schedule late of queue odd"), std::string::npos) << r.err;

  RunResult table = emq(server, {"schedules", "odd"});
  EXPECT_EQ(table.code, 0) << table.err;
}

// A definition another writer broke is not fired with guesses (its
// overlap may be skip): the refusal names the field; nothing is written.
TEST(SchedulesCli, FireOnADefinitionAnotherWriterBrokeSaysWhatIsWrong) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  c.command({"HSET", "emq:{reports}:schedules", "lane", R"({"every_ms":1000,"lane":"x","overlap":"skip"})", "overlap",
             R"({"every_ms":1000,"overlap":7})", "text", "{not json"});
  for (const char* name : {"lane", "overlap", "text"}) {
    RunResult r = emq(server, {"schedules", "fire", "reports", name});
    EXPECT_EQ(r.code, 3) << name << ": " << r.err;
    EXPECT_EQ(r.err.find("unexpected failure"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("schedule " + std::string(name) + " of queue reports"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not fired"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  RunResult lane = emq(server, {"schedules", "fire", "reports", "lane"});
  EXPECT_NE(lane.err.find("\"lane\" is not an integer in -1000..1000"), std::string::npos) << lane.err;
  EXPECT_EQ(c.command({"EXISTS", "emq:{reports}:cron", "emq:{reports}:pending"}).integer, 0) << "nothing written";
}

// A marker ahead of the server's clock holds the schedule until then
// (enqueue_cron never moves a marker back): the listing says so, and its
// next fire is the first tick after the marker, not one a second away.
TEST(SchedulesCli, AMarkerAheadOfTheServersClockShowsTheScheduleHeldUntilIt) {
  ValkeyServer server;
  Connection c = Connection::open(server.options());
  const std::int64_t ahead = server_ms(c) + 3600 * 1000;
  c.command({"HSET", "emq:{ticks}:schedules", "beat", kEverySecond});
  c.command({"HSET", "emq:{ticks}:cron", "beat", std::to_string(ahead) + ":JOB_future"});
  RunResult r = emq(server, {"schedules", "ticks", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json beat = nlohmann::json::parse(r.out).at(0);
  EXPECT_EQ(beat["held_until_ms"], ahead) << r.out;
  EXPECT_EQ(beat["next_fire_ms"], ahead / 1000 * 1000 + 1000) << r.out;
  EXPECT_NE(beat["problem"].get<std::string>().find("ahead of the server's clock"), std::string::npos) << r.out;

  RunResult table = emq(server, {"schedules", "ticks"});
  EXPECT_NE(table.err.find("schedule beat of queue ticks: held until"), std::string::npos) << table.err;
  EXPECT_NE(table.err.find("HDEL emq:{ticks}:cron beat"), std::string::npos) << table.err;
}

}  // namespace
}  // namespace echomq::test
