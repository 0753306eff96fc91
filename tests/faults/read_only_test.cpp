// The daemon's server turns read-only in the middle of a run (it becomes a
// replica: REPLICAOF), then writable again (REPLICAOF NO ONE). Writes meet
// READONLY, which the daemon treats as transient: it says so in its log,
// keeps what finished meanwhile, retries, and resumes once writes pass.
//
// REPLICAOF makes a server take its master's data set, so pointed at an
// empty server it would drop every job, a loss the test would cause, not
// the daemon. So the test does what a careful operator's switch-over does:
// a second server first becomes a replica of the daemon's server and
// catches up; writes on the daemon's server are paused (CLIENT PAUSE WRITE)
// until the replica has every byte; then the roles swap, so the daemon's
// server replicates a copy of its own data and refuses writes. Undoing it,
// REPLICAOF NO ONE, keeps that data. No job exists only on the side that
// loses it.
#include "fault_fixture.h"

namespace echomq::test {
namespace {

std::int64_t info_field(Executor& on, const std::string& field) {
  const std::string info = on.command({"INFO", "replication"}).str;
  const std::size_t at = info.find(field + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(info.substr(at + field.size() + 1));
}

std::string info_text(Executor& on, const std::string& field) {
  const std::string info = on.command({"INFO", "replication"}).str;
  const std::size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  const std::size_t from = at + field.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

class ReadOnly : public Faults {};

TEST_F(ReadOnly, AServerTurnedReplicaMidRunIsRiddenOutAndTheRunResumes) {
  const int kJobs = 600, kConcurrency = 4;
  ValkeyServer copy;
  Executor cx(copy.options());
  ASSERT_EQ(cx.command({"REPLICAOF", "127.0.0.1", std::to_string(server.port())}).str, "OK");
  ASSERT_TRUE(wait_for([&] { return info_text(cx, "master_link_status") == "up"; }, seconds(20)));

  std::vector<std::string> ids = put_many("ro", kJobs);
  EmqdProcess d(fault_config_head(server.url(), {}) +
                ledger_queue("ro", kConcurrency, 30000, ledger_path(), "a", "sleep 0.01"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return completed("ro") >= 100; }, seconds(60))) << d.log();

  // The swap: hold writes, let the copy catch up, promote it, demote ours.
  ASSERT_EQ(x.command({"CLIENT", "PAUSE", "10000", "WRITE"}).str, "OK");
  ASSERT_TRUE(
      wait_for([&] { return info_field(cx, "slave_repl_offset") == info_field(x, "master_repl_offset"); }, seconds(5)));
  ASSERT_EQ(cx.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  ASSERT_EQ(x.command({"REPLICAOF", "127.0.0.1", std::to_string(copy.port())}).str, "OK");
  ASSERT_EQ(x.command({"CLIENT", "UNPAUSE"}).str, "OK");
  const std::int64_t done_at_switch = completed("ro");

  // Read-only for as long as it takes the daemon to report it, and then
  // some: outcomes pile up, nothing completes.
  EXPECT_TRUE(d.wait_log("READONLY", seconds(10))) << d.log();
  std::this_thread::sleep_for(milliseconds(1500));  // the read-only spell itself
  const std::int64_t done_while_ro = completed("ro") - done_at_switch;
  EXPECT_EQ(x.command({"SET", "probe", "1"}).str.rfind("READONLY", 0), 0u) << "the server should refuse writes";

  ASSERT_EQ(x.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  ASSERT_TRUE(all_completed(x, "ro", kJobs, seconds(120))) << d.log();
  LedgerCounts c = expect_all_completed(x, "ro", ids, ledger_path());
  EXPECT_LE(c.rerun(), static_cast<std::size_t>(kConcurrency));
  QueueStats s = stats_of("ro");
  EXPECT_EQ(s.counters["retried"], 0) << "refused writes are no job's failure";
  EXPECT_EQ(done_while_ro, 0) << "nothing can complete on a replica";
  report_figures(
      "server turned read-only (REPLICAOF) for ~2 s",
      "jobs=" + std::to_string(kJobs) + " completed_at_switch=" + std::to_string(done_at_switch) +
          " ran_twice=" + std::to_string(c.rerun()) + " bound=" + std::to_string(kConcurrency) +
          " (jobs in flight) retried=0 readonly_log_lines=" + std::to_string(occurrences(d.log(), "READONLY")));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

// A server that turns replica of a primary that is gone keeps its data and
// refuses every write for as long as it lasts. The daemon backs off as from
// a lost server, logs the state change once per duty (not each retry),
// counts the refused attempts when it ends, and /healthz and emq_valkey_up
// both say the server refuses writes.
TEST_F(ReadOnly, AReplicaOfAGonePrimaryIsOneLogLineAndA503ThatSaysSo) {
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  EmqdProcess d(fault_config_head(server.url(), f) + ledger_queue("ro1", 2, 30000, ledger_path(), "a", "true") +
                ledger_queue("ro2", 2, 30000, ledger_path(), "a", "true"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return http_get(f.metrics_port, "/healthz").status == 200; }, seconds(10))) << d.log();

  ASSERT_EQ(x.command({"REPLICAOF", "127.0.0.1", std::to_string(free_loopback_port())}).str, "OK");
  HttpAnswer h;
  ASSERT_TRUE(wait_for(
      [&] {
        h = http_get(f.metrics_port, "/healthz");
        return h.status == 503;
      },
      seconds(10)))
      << d.log();
  EXPECT_EQ(h.body, "the server refuses writes (READONLY)\n");
  EXPECT_EQ(metric(f.metrics_port, "emq_valkey_up"), 0) << "the gauge and /healthz agree";
  const std::size_t lines_at_start = occurrences(d.log(), "READONLY");
  std::this_thread::sleep_for(seconds(4));  // the read-only spell: the backoff grows meanwhile
  const std::size_t lines = occurrences(d.log(), "READONLY");
  // Two claim loops, the reaper and the sampler each say it once; before,
  // every loop said it every 50 ms (about 160 lines in 4 s).
  EXPECT_LE(lines, 6u) << d.log();
  EXPECT_LE(lines - lines_at_start, 2u) << "no line per retry:\n" << d.log();

  ASSERT_EQ(x.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  EXPECT_TRUE(wait_for([&] { return http_get(f.metrics_port, "/healthz").status == 200; }, seconds(10))) << d.log();
  EXPECT_EQ(metric(f.metrics_port, "emq_valkey_up"), 1);
  EXPECT_TRUE(d.wait_log("the server takes calls again, after", seconds(10))) << d.log();
  const std::string id = put("ro1", "after");
  EXPECT_TRUE(wait_for([&] { return completed("ro1") == 1; }, seconds(10))) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

// The check that the server takes writes is the daemon's own, not the
// metrics endpoint's: with metrics.listen "" it ran nowhere but in a claim
// loop that happened to claim.
TEST_F(ReadOnly, AServerThatRefusesWritesIsFoundWithoutMetrics) {
  EmqdProcess d(fault_config_head(server.url(), {}) + ledger_queue("ro3", 1, 30000, ledger_path(), "a", "true"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_EQ(x.command({"REPLICAOF", "127.0.0.1", std::to_string(free_loopback_port())}).str, "OK");
  EXPECT_TRUE(d.wait_log("the server refuses writes (READONLY)", seconds(10))) << d.log();
  ASSERT_EQ(x.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  EXPECT_TRUE(d.wait_log("the server takes writes again", seconds(10))) << d.log();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
