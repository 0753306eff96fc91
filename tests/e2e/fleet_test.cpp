// The fleet (PROTOCOL.md, "Daemons: who runs what"), with real emqd and emq
// processes: daemons list themselves with their queues and running jobs;
// `emq daemons quiet` is answered within a beat, after which the daemon
// claims nothing while its running job completes; `emq daemons stop`
// drains and exits 0, leaving no trace; a SIGKILLed daemon drops out within
// six beats and never shows again; SIGTSTP is a local quiet; a beat that
// fails is tried again at the next one. The times measured (signal to ack,
// SIGKILL to gone) are printed.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "e2e_fixture.h"
#include "echomq/connection.h"
#include "echomq/daemons.h"
#include "echomq/keyspace.h"

namespace echomq::test {
namespace {

class FleetE2E : public E2E {
 protected:
  // A gate: each job says it started, then waits for the release file.
  std::string gated_queue(const std::string& name, int concurrency = 1) {
    return "  - name: " + name + "\n    concurrency: " + std::to_string(concurrency) +
           "\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
           "      command: [\"/bin/sh\", \"-c\", \"touch " +
           server.dir() + "/started-$EMQ_JOB_ID; while [ ! -e " + server.dir() +
           "/release ]; do sleep 0.02; done; cat\"]\n";
  }
  std::string config(const std::string& name, double beat_s, const std::string& queues) {
    return config_head(server, "daemon:\n  name: " + name + "\n  beat_s: " + std::to_string(beat_s) + "\n") + queues;
  }
  bool started(const std::string& id) { return std::filesystem::exists(server.dir() + "/started-" + id); }
  void release() { std::ofstream(server.dir() + "/release") << "go"; }

  // The registry's entry of the daemon with this pid, if it is listed.
  std::optional<DaemonInfo> listed(pid_t pid, bool with_jobs = false) {
    for (DaemonInfo& d : list_daemons(x, with_jobs).daemons) {
      if (d.pid == pid) return std::move(d);
    }
    return std::nullopt;
  }
  DaemonInfo wait_listed(const EmqdProcess& d) {
    std::optional<DaemonInfo> found;
    EXPECT_TRUE(wait_for([&] { return (found = listed(d.pid())).has_value(); }, seconds(20))) << d.log();
    return found.value_or(DaemonInfo{});
  }
  RunResult emq(std::vector<std::string> args) {
    args.insert(args.begin(), emq_binary());
    return run_program(args, "", {"EMQ_URL=" + server.url()});
  }
  std::int64_t registry_keys() {
    return static_cast<std::int64_t>(x.command({"KEYS", "{emq}:daemon*"}).elements.size());
  }
};

TEST_F(FleetE2E, ThreeDaemonsAreListedWithTheirQueuesAndTheJobsEachRuns) {
  EmqdProcess a(config("host-a", 0.5, gated_queue("qa") + gated_queue("shared")));
  EmqdProcess b(config("host-b", 0.5, gated_queue("qb")));
  EmqdProcess c(config("host-c", 0.5, gated_queue("qc", 3)));
  for (EmqdProcess* d : {&a, &b, &c}) ASSERT_TRUE(d->wait_ready()) << d->log();
  const std::string ja = put("qa", "a"), jb = put("qb", "b"), jc = put("qc", "c");
  ASSERT_TRUE(wait_for([&] { return started(ja) && started(jb) && started(jc); }, seconds(20)));
  // Each lists its job as running once a beat after the job took its slot
  // has written it (a beat between the claim and the slot says prefetched).
  const auto running_one = [](const std::optional<DaemonInfo>& d) { return d && d->busy == 1 && d->jobs.size() == 1; };
  ASSERT_TRUE(wait_for(
      [&] {
        return running_one(listed(a.pid(), true)) && running_one(listed(b.pid(), true)) &&
               running_one(listed(c.pid(), true));
      },
      seconds(10)));

  RunResult r = emq({"daemons", "--jobs", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all.size(), 3u) << r.out;
  std::map<std::string, nlohmann::json> by_host;
  for (const auto& d : all) by_host[d["host"]] = d;
  EXPECT_EQ(by_host["host-a"]["queues"], (nlohmann::json{"qa", "shared"}));
  EXPECT_EQ(by_host["host-a"]["slots"], 2);
  EXPECT_EQ(by_host["host-c"]["slots"], 3);
  for (const auto& [host, job, queue] : {std::tuple{"host-a", ja, "qa"}, {"host-b", jb, "qb"}, {"host-c", jc, "qc"}}) {
    const nlohmann::json& d = by_host[host];
    EXPECT_EQ(d["state"], "running") << d;
    EXPECT_EQ(d["busy"], 1) << d;
    ASSERT_EQ(d["jobs"].size(), 1u) << d;
    EXPECT_EQ(d["jobs"][0]["queue"], queue);
    EXPECT_EQ(d["jobs"][0]["id"], job);
    EXPECT_EQ(d["jobs"][0]["attempt"], 1);
    EXPECT_EQ(d["id"].get<std::string>().rfind(std::string(host) + "-", 0), 0u) << d["id"];
  }
  r = emq({"daemons", "--jobs"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& d : all) EXPECT_NE(r.out.find(d["id"].get<std::string>()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(ja), std::string::npos) << r.out;

  // A clean stop leaves no trace in the registry.
  release();
  for (EmqdProcess* d : {&a, &b, &c}) d->signal(SIGTERM);
  for (EmqdProcess* d : {&a, &b, &c}) EXPECT_EQ(d->wait_exit(seconds(20)), 0) << d->log();
  EXPECT_EQ(registry_keys(), 0) << "a daemon that stopped cleanly left keys behind";
  EXPECT_EQ(x.command({"ZCARD", std::string(kDaemonsKey)}).integer, 0);
}

// A running job's latest progress shows beside it in the registry, as its
// handler reported it, at the beat after the report.
TEST_F(FleetE2E, ARunningJobsProgressIsListedWithIt) {
  const std::string queue =
      "  - name: qp\n    concurrency: 1\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
      "      command: [\"/bin/sh\", \"-c\", \"echo 40% >&$EMQ_PROGRESS_FD; touch " +
      server.dir() + "/started-$EMQ_JOB_ID; while [ ! -e " + server.dir() + "/release ]; do sleep 0.02; done; cat\"]\n";
  EmqdProcess d(config("host-p", 0.2, queue));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string id = put("qp", "p");
  ASSERT_TRUE(wait_for([&] { return started(id); }, seconds(20)));
  std::optional<DaemonInfo> seen;
  EXPECT_TRUE(wait_for(
      [&] {
        seen = listed(d.pid(), true);
        return seen && seen->jobs.size() == 1 && seen->jobs[0].progress.has_value();
      },
      seconds(10)))
      << d.log();
  ASSERT_TRUE(seen && seen->jobs.size() == 1);
  EXPECT_EQ(seen->jobs[0].id, id);
  EXPECT_EQ(seen->jobs[0].progress.value_or(""), "40%");
  RunResult r = emq({"daemons", "--jobs", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["jobs"][0]["progress"], "40%") << r.out;
  release();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

TEST_F(FleetE2E, QuietIsAnsweredWithinABeatThenNothingIsClaimedAndTheRunningJobCompletes) {
  constexpr std::int64_t kBeatMs = 1000;
  EmqdProcess d(config("quiet-host", 1.0, gated_queue("q", 2)));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const DaemonInfo me = wait_listed(d);
  const std::string running = put("q", "running");
  ASSERT_TRUE(wait_for([&] { return started(running); }, seconds(20))) << d.log();

  // "Within a beat", counted in beats rather than timed (a loaded host
  // wakes its threads late): the daemon's hash and its signals list are
  // read together, in one MULTI, every few ms while emq waits for the
  // answer, so each read shows which beat was the last and whether the
  // signal still waited.
  struct Seen {
    std::string beat, ack;
    long long waiting = 0;
  };
  std::vector<Seen> seen;
  std::atomic<bool> watching{true};
  std::thread watcher([&] {
    Connection c = Connection::open(server.options());
    const DaemonKeys k(me.id);
    while (watching) {
      const std::vector<Reply> r =
          c.pipeline({{"MULTI"}, {"HGET", k.hash, "beat_ms"}, {"HGET", k.hash, "ack"}, {"LLEN", k.signals}, {"EXEC"}});
      const Reply& read = r.back();
      if (read.type == Reply::Type::Array && read.elements.size() == 3) {
        seen.push_back(
            {read.elements[0].str, read.elements[1].is_nil() ? "" : read.elements[1].str, read.elements[2].integer});
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  const std::int64_t sent = x.server_time_ms();
  RunResult r = emq({"daemons", "quiet", me.id});
  watching = false;
  watcher.join();
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(me.id + ": quiet (answered in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 1 job still running"), std::string::npos) << r.out;
  const std::optional<DaemonInfo> quiet = listed(d.pid());
  ASSERT_TRUE(quiet.has_value()) << "the quiet daemon left the registry";
  ASSERT_TRUE(quiet->ack.has_value()) << "no ack in the registry, though emq printed an answer";
  EXPECT_EQ(quiet->ack->signal, "quiet");
  const std::int64_t ack_ms = quiet->ack->at_ms - sent;
  std::printf("fleet: quiet sent to ack in %lld ms (beat %lld ms); emq printed: %s", static_cast<long long>(ack_ms),
              static_cast<long long>(kBeatMs), r.out.c_str());
  RecordProperty("quiet_ack_ms", std::to_string(ack_ms));
  EXPECT_GE(ack_ms, 0) << "the ack must come from a beat after the signal was sent";
  EXPECT_EQ(quiet->state, "quiet");
  // From the first read that shows the signal waiting: no beat passes it
  // by (it waits only under the beat it came after; a beat's LPOP follows
  // its EXEC in one pipeline, so one read at most may fall between the
  // two), and the beat that takes it is the only one without the ack (the
  // next, at once, has it).
  std::size_t from = 0;
  while (from < seen.size() && seen[from].waiting == 0) ++from;
  if (from == seen.size()) from = 0;  // taken between two reads: count from the start
  ASSERT_LT(from, seen.size()) << "no read of the daemon's hash";
  std::set<std::string> without_ack;
  int passed_by = 0;
  bool acked = false;
  for (std::size_t i = from; i < seen.size() && !acked; ++i) {
    acked = seen[i].ack.rfind("quiet:", 0) == 0;
    if (seen[i].waiting > 0) {
      passed_by += seen[i].beat != seen[from].beat ? 1 : 0;
    } else if (!acked && seen[i].beat != seen[from].beat) {
      without_ack.insert(seen[i].beat);
    }
  }
  EXPECT_LE(passed_by, 1) << "a beat passed the waiting signal by (" << passed_by
                          << " reads saw it wait under a newer beat)";
  EXPECT_TRUE(acked) << "no read showed the ack while emq waited for it";
  EXPECT_LE(without_ack.size(), 1u) << "beats after the one that took the signal came without its ack";

  // Jobs wait; the running one completes; nothing more is claimed, beat after beat.
  const std::string waits = put("q", "waits");
  release();
  ASSERT_TRUE(wait_for([&] { return row("q", running)["state"] == "completed"; }, seconds(20))) << d.log();
  const std::int64_t done_at = x.server_time_ms();
  ASSERT_TRUE(wait_for(
      [&] {
        auto now = listed(d.pid());
        return now && now->beat_ms > done_at + kBeatMs && now->busy == 0;
      },
      seconds(20)))
      << d.log();
  EXPECT_EQ(row("q", waits)["state"], "pending") << "a quiet daemon claimed a job";
  const std::optional<DaemonInfo> after = listed(d.pid());
  ASSERT_TRUE(after.has_value()) << "the quiet daemon left the registry";
  EXPECT_EQ(after->state, "quiet");
  EXPECT_TRUE(d.running()) << "quiet must keep the daemon up";

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_EQ(row("q", waits)["state"], "pending");
}

TEST_F(FleetE2E, StopThroughTheRegistryDrainsAndExitsZero) {
  EmqdProcess d(config("stop-host", 0.5, gated_queue("q")));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const DaemonInfo me = wait_listed(d);
  const std::string running = put("q", "drained");
  ASSERT_TRUE(wait_for([&] { return started(running); }, seconds(20))) << d.log();

  RunResult r = emq({"daemons", "stop", "--all"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(me.id + ": stopping (answered in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 1 job still running"), std::string::npos) << r.out;
  ASSERT_TRUE(d.wait_log("draining:", seconds(5))) << d.log();
  // A second stop while it drains must not be the second SIGTERM that
  // stops running jobs at once.
  r = emq({"daemons", "stop", me.id});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  release();
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_EQ(d.log().find("second signal"), std::string::npos) << d.log();
  EXPECT_EQ(row("q", running)["state"], "completed") << d.log();
  EXPECT_EQ(registry_keys(), 0);
  r = emq({"daemons", "--json"});
  EXPECT_EQ(r.out, "[]\n") << r.out;
}

TEST_F(FleetE2E, AKilledDaemonLeavesTheListWithinSixBeatsAndNeverShowsAgain) {
  constexpr std::int64_t kBeatMs = 200;
  EmqdProcess d(config("killed-host", 0.2, gated_queue("q")));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const DaemonInfo me = wait_listed(d);
  d.signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_for([&] { return !listed(d.pid()).has_value(); }, seconds(10)));
  const auto gone_ms = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - killed).count();
  std::printf("fleet: SIGKILL to gone from emq daemons in %lld ms (beat %lld ms, 6 beats %lld ms)\n",
              static_cast<long long>(gone_ms), static_cast<long long>(kBeatMs), static_cast<long long>(6 * kBeatMs));
  RecordProperty("sigkill_to_gone_ms", std::to_string(gone_ms));
  // The keys expire six beats after the last beat, which came at most a
  // beat before the kill; reads see an expired key as gone at once.
  EXPECT_LE(gone_ms, 6 * kBeatMs + 1000);

  // Six more beats by the server's clock: it stays out, a ghost.
  const std::int64_t from = x.server_time_ms();
  ASSERT_TRUE(wait_for([&] { return x.server_time_ms() > from + 6 * kBeatMs; }, seconds(10)));
  const Fleet f = list_daemons(x, false);
  EXPECT_TRUE(f.daemons.empty());
  EXPECT_EQ(f.ghosts, 1u);
  RunResult r = emq({"daemons"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("1 stopped beating without leaving"), std::string::npos) << r.err;
  // A signal to it finds no one and waits for no one.
  r = emq({"daemons", "quiet", me.id});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  // An hour after its last beat, a reader removes it for good.
  x.command({"ZADD", std::string(kDaemonsKey), std::to_string(from - 2 * kForgetDaemonAfterMs), me.id});
  EXPECT_EQ(list_daemons(x, false).forgotten, 1u);
  EXPECT_EQ(x.command({"ZCARD", std::string(kDaemonsKey)}).integer, 0);
}

TEST_F(FleetE2E, SigtstpQuietsTheDaemonLocally) {
  EmqdProcess d(config("tstp-host", 0.3, gated_queue("q")));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  wait_listed(d);
  d.signal(SIGTSTP);
  ASSERT_TRUE(d.wait_log("received SIGTSTP", seconds(5))) << d.log();
  ASSERT_TRUE(wait_for([&] { return listed(d.pid())->state == "quiet"; }, seconds(5))) << d.log();
  const std::string waits = put("q", "waits");
  const std::int64_t from = x.server_time_ms();
  ASSERT_TRUE(wait_for([&] { return listed(d.pid())->beat_ms > from + 600; }, seconds(10))) << d.log();
  EXPECT_EQ(row("q", waits)["state"], "pending");
  EXPECT_TRUE(d.running()) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

TEST_F(FleetE2E, ABeatThatFailsIsTriedAgainAtTheNextOne) {
  EmqdProcess d(config("flaky-host", 0.2, gated_queue("q")));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  wait_listed(d);
  server.stop();
  ASSERT_TRUE(d.wait_log("heartbeat: a beat of", seconds(10))) << d.log();
  server.start();  // no AOF: an empty server, the entry gone with the rest
  x.disconnect();  // the test's own connection died with the server
  ASSERT_TRUE(wait_for([&] { return listed(d.pid()).has_value(); }, seconds(20))) << d.log();
  EXPECT_TRUE(d.wait_log("heartbeat: beats again", seconds(5))) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

// A queue with prefetch holds jobs claimed ahead that wait for a slot:
// `emq daemons` counts them apart from the busy slots (never more busy than
// slots) and `--jobs` says they wait rather than run.
TEST_F(FleetE2E, JobsClaimedAheadAreShownWaitingForASlotNotRunning) {
  const std::string queue = gated_queue("qp", 1) + "    prefetch: 3\n";
  EmqdProcess d(config("prefetch-host", 0.2, queue));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(put("qp", "p"));
  ASSERT_TRUE(wait_for(
      [&] {
        auto now = listed(d.pid(), true);
        return now && now->jobs.size() == 4;
      },
      seconds(20)))
      << d.log();

  RunResult r = emq({"daemons", "--jobs", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json me = nlohmann::json::parse(r.out)[0];
  EXPECT_EQ(me["slots"], 1) << me;
  EXPECT_EQ(me["busy"], 1) << me;
  EXPECT_EQ(me["prefetched"], 3) << me;
  int waiting = 0;
  for (const auto& j : me["jobs"]) {
    if (j["prefetched"] == true) {
      ++waiting;
    } else {
      EXPECT_TRUE(started(j["id"])) << "the job shown running is the one at the gate: " << j;
    }
  }
  EXPECT_EQ(waiting, 3) << me;

  r = emq({"daemons", "--jobs"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[0].find("PREFETCHED"), std::string::npos) << r.out;
  EXPECT_NE(lines[1].find(" 1/1 "), std::string::npos) << r.out;
  std::size_t said = 0;
  for (const std::string& line : lines) said += line.find("waits for a slot") != std::string::npos;
  EXPECT_EQ(said, 3u) << r.out;

  release();
  ASSERT_TRUE(settled("qp", 6)) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
