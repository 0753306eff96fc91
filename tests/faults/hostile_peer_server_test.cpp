// A hostile (or merely careless) peer writes what the wire lets through but
// no emq speaker would: ids that pass the wire's gate (JOB...) and not the
// host-side form, counters that are not integers. emqd runs and settles
// such jobs like any other and never ends for them; emq shows, lists,
// retries and cancels them; stats show what they can and name the rest.
// (The process half, hostile handlers, is hostile_peer_process_test.cpp.)
#include "fault_fixture.h"

namespace echomq::test {
namespace {

// Ids a peer can enqueue through lua/enqueue.lua: the wire checks only the
// first three bytes.
const std::vector<std::string> kOddIds = {"JOBX1", "JOB\n2", "JOB"};

class HostilePeer : public Faults {
 protected:
  // Through the script itself, as a peer would: enqueue_call refuses these.
  void peer_enqueue(const std::string& queue, const std::string& id, const std::string& payload) {
    QueueKeys q(queue);
    Reply r = x.eval({Script::Enqueue, {q.row_root + id, q.pending}, {id, payload}});
    ASSERT_EQ(r.integer, 1) << "the wire takes " << id;
  }

  RunResult emq(std::vector<std::string> args) {
    args.insert(args.begin(), {emq_binary(), "--url", server.url()});
    return run_program(args);
  }

  std::string queue_yaml(const std::string& name, const std::string& script, const std::string& more = "") {
    return "  - name: " + name + "\n    concurrency: 2\n    lease_ms: 5000\n" + more +
           "    handler:\n      type: exec\n      command: [\"" + std::string(EMQ_TEST_HANDLERS) + "/" + script +
           "\"]\n";
  }
};

TEST_F(HostilePeer, IdsPastTheWireGateButNotTheHostFormAreRunAndSettled) {
  // "ok" completes every job; "bad" fails every job for good (exit 65), so
  // both settling paths (complete, fail to dead) meet the odd ids.
  for (const std::string& id : kOddIds) {
    peer_enqueue("ok", id, "p");
    peer_enqueue("bad", id, "p");
  }
  const std::string normal = put("ok", "p");
  EmqdProcess d(fault_config_head(server.url(), {}) + queue_yaml("ok", "ok.sh") + queue_yaml("bad", "exit65.sh"));
  ASSERT_TRUE(d.wait_ready()) << d.log();

  ASSERT_TRUE(wait_for(
      [&] {
        QueueStats ok = stats_of("ok"), bad = stats_of("bad");
        return ok.counters["completed"] == 4 && bad.dead == 3 && ok.pending + ok.active + bad.pending + bad.active == 0;
      },
      seconds(30)))
      << d.log();
  EXPECT_TRUE(d.running()) << "an odd id ended the daemon:\n" << d.log();
  for (const std::string& id : kOddIds) {
    EXPECT_TRUE(row("ok", id).empty()) << "completed rows are deleted";
    EXPECT_EQ(row("bad", id)["state"], "dead");
  }
  EXPECT_TRUE(row("ok", normal).empty());
  EXPECT_EQ(stats_of("ok").counters["completed"], 4);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

TEST_F(HostilePeer, AnIdPastNoGateInPendingIsDroppedAndTheDaemonLives) {
  // A peer that ZADDs straight to pending and writes a row by hand: claim
  // hands out an id no settling script takes. The daemon must not die.
  QueueKeys q("raw");
  x.command({"HSET", q.row_root + "TASK1", "state", "pending", "attempts", "0", "payload", "p"});
  x.command({"ZADD", q.pending, "0", "TASK1"});
  const std::string normal = put("raw", "p");
  EmqdProcess d(fault_config_head(server.url(), {}) + queue_yaml("raw", "ok.sh"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return completed("raw") == 1; }, seconds(30))) << d.log();
  EXPECT_TRUE(d.wait_log("TASK1", seconds(10))) << "the refusal is named in the log:\n" << d.log();
  EXPECT_TRUE(d.running()) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

TEST_F(HostilePeer, EmqShowsListsRetriesAndCancelsIdsReadBackFromTheServer) {
  QueueKeys q("odd");
  for (const std::string& id : kOddIds) peer_enqueue("odd", id, "payload of " + id);
  // Two of them die, as a daemon would leave them.
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 2, 0});
  ASSERT_EQ(jobs.size(), 2u);
  for (const ClaimedJob& j : jobs) {
    ASSERT_EQ(fail(x, q, {j.id, j.lease_epoch}, {"broken", 5, 0, true}), FailResult::Dead);
  }

  RunResult shown = emq({"inspect", "odd", "JOBX1"});
  EXPECT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("payload of JOBX1"), std::string::npos) << shown.out;

  RunResult listed = emq({"dead", "list", "odd"});
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("broken"), std::string::npos) << listed.out;
  RunResult as_json = emq({"dead", "list", "odd", "--json"});
  EXPECT_EQ(as_json.code, 0) << as_json.err;
  // Claim order is byte order: "JOB" and "JOB\n2" died.
  EXPECT_NE(as_json.out.find("\"JOB\\n2\""), std::string::npos) << as_json.out;

  RunResult retried = emq({"dead", "retry", "odd"});
  EXPECT_EQ(retried.code, 0) << retried.err;
  EXPECT_EQ(retried.out, "2\n");
  EXPECT_EQ(stats_of("odd").pending, 3);

  RunResult cancelled = emq({"cancel", "odd", "JOBX1"});
  EXPECT_EQ(cancelled.code, 0) << cancelled.err;
  EXPECT_TRUE(row("odd", "JOBX1").empty());
  RunResult newline = emq({"cancel", "odd", "JOB\n2"});
  EXPECT_EQ(newline.code, 0) << newline.err;
  EXPECT_EQ(stats_of("odd").pending, 1);

  // A dead set holding an id past no gate at all still lists.
  x.command({"ZADD", q.dead, "1000", "TASK9"});
  RunResult with_foreign = emq({"dead", "list", "odd"});
  EXPECT_EQ(with_foreign.code, 0) << with_foreign.err;
  EXPECT_NE(with_foreign.out.find("TASK9"), std::string::npos) << with_foreign.out;

  // What a user enqueues keeps the full check; what a user names to look
  // at passes the wire's gate.
  RunResult refused = emq({"enqueue", "odd", "--id", "JOBX2", "p"});
  EXPECT_EQ(refused.code, 2) << refused.out << refused.err;
  EXPECT_EQ(emq({"inspect", "odd", "TASK1"}).code, 2);
}

TEST_F(HostilePeer, ACorruptedCounterIsNamedAndTheRestIsShown) {
  const std::string id = put("corrupt", "p");
  put("fine", "p");
  QueueKeys q("corrupt");
  x.command({"HSET", q.stats, "completed", "many", "retried", "7"});
  register_queues(x, {"corrupt", "fine"});

  RunResult table = emq({"stats"});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("fine"), std::string::npos) << "the other queues are shown:\n" << table.out;
  EXPECT_NE(table.err.find("emq:{corrupt}:stats completed"), std::string::npos) << table.err;
  EXPECT_NE(table.err.find("many"), std::string::npos) << table.err;
  RunResult json = emq({"stats", "corrupt", "--json"});
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"completed\": null"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"retried\": 7"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"pending\": 1"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"problems\""), std::string::npos) << json.out;

  // The daemon: the sampler names the field, /healthz stays 200, and the
  // job is claimed, run and completed (claim checks its counter first).
  x.command({"HSET", q.stats, "claimed", "lots"});
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  EmqdProcess d(fault_config_head(server.url(), f) + queue_yaml("corrupt", "ok.sh"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_TRUE(d.wait_log("emq:{corrupt}:stats claimed holds 'lots'", seconds(10))) << d.log();
  ASSERT_TRUE(wait_for([&] { return row("corrupt", id).empty(); }, seconds(20))) << d.log();
  QueueStats s = stats_of("corrupt");
  EXPECT_EQ(s.pending + s.active, 0);
  EXPECT_EQ(x.command({"HGET", q.stats, "claimed"}).str, "lots") << "left for an operator";
  EXPECT_TRUE(wait_for([&] { return http_get(f.metrics_port, "/healthz").status == 200; }, seconds(10)));
  EXPECT_EQ(d.log().find("does not answer"), std::string::npos) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
