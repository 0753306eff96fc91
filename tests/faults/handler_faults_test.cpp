// Every way an exec handler misbehaves, on one queue at once, each ending
// as DESIGN.md's contract says, while the same queue and another one go on
// serving ordinary jobs. The handlers are the real programs of
// tests/handlers/; the queue's command runs the one the payload names.
#include "fault_fixture.h"
#include "process_probe.h"

namespace echomq::test {
namespace {

class HandlerFaults : public Faults {};

// Nothing of the handler's group runs any more, and emqd reaped the one it
// started. Not "the group is gone": a grandchild killed with it is reaped
// by whoever inherited it (init here), which emqd does not control and
// which took over 3 s on a loaded machine.
bool group_ended(pid_t pgid) {
  ProcStat leader;
  return live_processes_in_group(pgid).empty() && !read_proc_stat(pgid, leader);
}

TEST_F(HandlerFaults, EachMisbehaviourEndsAsTheContractSaysWhileOtherJobsGoOn) {
  const std::string dispatch = "read what; exec " EMQ_TEST_HANDLERS "/$what";
  EmqdProcess d(fault_config_head(server.url(), {}) +
                ledger_queue("faulty", 8, 30000, ledger_path(), "a", dispatch,
                             "    max_attempts: 2\n    keep_completed_s: 300\n"
                             "    backoff: { initial_ms: 50, multiplier: 1.0, max_ms: 50, jitter: 0 }\n") +
                "      timeout_s: 2\n      kill_grace_s: 2\n      max_output_bytes: 4096\n" +
                ledger_queue("steady", 2, 30000, server.dir() + "/steady.txt", "a", ":"));
  ASSERT_TRUE(d.wait_ready()) << d.log();

  std::map<std::string, std::string> id;  // handler -> job
  for (const char* h : {"ignore_term.sh", "hang.sh", "exit3.sh", "exit65.sh", "crash_signal.sh", "flood_stdout.sh",
                        "fork_outlives.sh"}) {
    id[h] = put("faulty", h);
  }
  ASSERT_TRUE(wait_for([&] { return row("faulty", id["ignore_term.sh"])["state"] == "active"; }, seconds(10)));

  // Ordinary work on the same queue and on another, while the stubborn
  // ones still hold their slots.
  std::vector<std::string> ok, steady;
  for (int i = 0; i < 10; ++i) ok.push_back(put("faulty", "ok.sh"));
  steady = put_many("steady", 40);
  ASSERT_TRUE(wait_for(
      [&] {
        for (const std::string& j : ok) {
          if (row("faulty", j)["state"] != "completed") return false;
        }
        return completed("steady") == 40;
      },
      seconds(30)))
      << d.log();
  EXPECT_NE(row("faulty", id["ignore_term.sh"])["state"], "dead")
      << "the ordinary jobs should not have waited for the stubborn one";
  for (const std::string& j : ok) EXPECT_EQ(row("faulty", j)["result"], "ok:");

  ASSERT_TRUE(settled("faulty", 17, seconds(60))) << d.log();
  auto expect_dead = [&](const std::string& h, const std::string& attempts, const std::string& says) {
    auto r = row("faulty", id[h]);
    EXPECT_EQ(r["state"], "dead") << h;
    EXPECT_EQ(r["attempts"], attempts) << h;
    EXPECT_NE(r["error"].find(says), std::string::npos) << h << ": " << r["error"];
    return r;
  };
  expect_dead("exit3.sh", "2", "exit code 3");
  expect_dead("exit3.sh", "2", "transient trouble");  // the stderr tail
  expect_dead("exit65.sh", "1", "bad payload");       // permanent: no retry
  expect_dead("crash_signal.sh", "2", "SIGSEGV");
  expect_dead("hang.sh", "2", "timed out");
  expect_dead("flood_stdout.sh", "2", "output exceeded max_output_bytes (4096)");
  auto stubborn = expect_dead("ignore_term.sh", "2", "timed out");
  const pid_t stubborn_group = pgid_in(stubborn["error"]);
  ASSERT_GT(stubborn_group, 0) << stubborn["error"];
  EXPECT_TRUE(wait_for([&] { return group_ended(stubborn_group); }, seconds(3))) << "SIGKILL should end the group";

  auto forked = row("faulty", id["fork_outlives.sh"]);
  EXPECT_EQ(forked["state"], "completed") << forked["error"];
  EXPECT_EQ(forked["attempts"], "1");
  const pid_t forked_group = pgid_in(forked["result"]);
  ASSERT_GT(forked_group, 0) << forked["result"];
  EXPECT_TRUE(wait_for([&] { return group_ended(forked_group); }, seconds(3)))
      << "the sleeper it left holding the pipes should be gone with the job";

  QueueStats s = stats_of("faulty");
  EXPECT_EQ(s.counters["completed"], 11);
  EXPECT_EQ(s.dead, 6);
  EXPECT_EQ(s.counters["retried"], 5) << "one retry each, except the permanent exit";
  EXPECT_EQ(s.pending + s.active + s.delayed, 0);
  EXPECT_EQ(read_ledger(server.dir() + "/steady.txt").lines, 40u);
  EXPECT_EQ(read_ledger(ledger_path()).lines, 10u + 6 * 2 - 1 + 1)
      << "ok once each, the failures max_attempts (2) times but exit 65 once, the fork once";
  report_figures("handler faults (exit 3, exit 65, SIGSEGV, hang, TERM ignored, fork holding pipes, output flood)",
                 "jobs=" + std::to_string(17 + 40) + " faulty=7 ended_as_contract=7 ordinary_completed=50");
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
