// Rows no well-behaved speaker writes, planted on the server among ordinary
// jobs: a row without its payload, attempts that are not a number, an id in
// two sets at once, a row key of the wrong type (a string where a hash
// belongs: WRONGTYPE), in pending and in active. No loop may die of them,
// the ordinary jobs around them must all run, and each bad row must end
// somewhere an operator can see it.
#include <fstream>
#include <sstream>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class MalformedRows : public Faults {};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(MalformedRows, AreSkippedOrSettledWithoutStoppingTheQueueOrLosingItsOtherJobs) {
  const int kGood = 60;
  const QueueKeys q("bad");
  std::vector<std::string> good;

  // Each bad row is minted between good jobs, and all of them come first
  // (claim order is id order): the daemon's first claim, sixteen slots
  // wide, pops them together, the bad in the middle of the good.
  auto good_one = [&] { good.push_back(put("bad", "x")); };
  const std::string no_payload = mint_job_id();
  x.command({"HSET", q.row(no_payload), "state", "pending", "attempts", "0"});
  x.command({"ZADD", q.pending, "0", no_payload});
  good_one();
  const std::string not_a_number = mint_job_id();
  x.command({"HSET", q.row(not_a_number), "state", "pending", "attempts", "many", "payload", "x"});
  x.command({"ZADD", q.pending, "0", not_a_number});
  good_one();
  const std::string two_sets = mint_job_id();
  enqueue(x, q, two_sets, "x");
  x.command({"ZADD", q.delayed, "1", two_sets});  // due long ago: the promoter will see it too
  good_one();
  const std::string wrong_type = mint_job_id();
  x.command({"SET", q.row(wrong_type), "not a hash"});
  x.command({"ZADD", q.pending, "0", wrong_type});
  good_one();
  // An expired lease on a row of the wrong type, for the reaper, between
  // two good ones whose leases expired too.
  std::vector<std::string> lapsed;
  for (int i = 0; i < 2; ++i) {
    lapsed.push_back(mint_job_id());
    good.push_back(lapsed.back());
    // What a claim by a worker that then died leaves behind.
    x.command({"HSET", q.row(lapsed.back()), "state", "active", "attempts", "1", "lease_epoch", "1", "payload", "x"});
  }
  const std::string wrong_type_active = mint_job_id();
  x.command({"SET", q.row(wrong_type_active), "not a hash"});
  x.command({"ZADD", q.active, "1", lapsed[0], "2", wrong_type_active, "3", lapsed[1]});
  for (const std::string& id : put_many("bad", kGood - static_cast<int>(good.size()))) good.push_back(id);

  EmqdProcess d(fault_config_head(server.url(), {}) +
                ledger_queue("bad", 16, 2000, ledger_path(), "a", "cat > /dev/null") +
                ledger_queue("other", 2, 30000, server.dir() + "/other.txt", "a", ":"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::vector<std::string> other = put_many("other", 20);

  // The queue goes on: every ordinary job runs, and so do the two bad rows
  // that can still run (no payload: an empty one; two sets: a job).
  ASSERT_TRUE(wait_for(
      [&] {
        LedgerCounts c = read_ledger(ledger_path());
        for (const std::string& id : good) {
          if (c.runs.count(id) == 0) return false;
        }
        QueueStats s = stats_of("bad");
        return c.runs.count(no_payload) && c.runs.count(two_sets) && s.active == 0 && s.pending == 0 && s.delayed == 0;
      },
      seconds(60)))
      << d.log();
  EXPECT_TRUE(wait_for([&] { return completed("other") == 20; }, seconds(30))) << "the other queue is served";
  EXPECT_TRUE(d.running()) << d.log();

  LedgerCounts c = read_ledger(ledger_path());
  for (const std::string& id : good) EXPECT_EQ(c.runs[id], 1) << id;
  EXPECT_EQ(c.runs.count(not_a_number), 0u) << "a row whose attempts cannot count must not run";
  EXPECT_EQ(c.runs.count(wrong_type), 0u);
  EXPECT_TRUE(row("bad", no_payload).empty()) << "it ran with an empty payload and completed";
  EXPECT_TRUE(row("bad", two_sets).empty()) << "it completed";

  // The rows nobody could run: a hash whose attempts cannot count is dead,
  // its error naming the field (PROTOCOL.md, claim); a row of the wrong
  // type is left as it was, out of every set, for an operator to look at.
  // The server's log names each.
  for (const std::string& set : {q.pending, q.active, q.delayed, q.dead}) {
    for (const std::string& id : {wrong_type, wrong_type_active, two_sets, no_payload}) {
      EXPECT_TRUE(x.command({"ZSCORE", set, id}).is_nil()) << id << " is still in " << set;
    }
  }
  for (const std::string& set : {q.pending, q.active, q.delayed}) {
    EXPECT_TRUE(x.command({"ZSCORE", set, not_a_number}).is_nil()) << "still in " << set;
  }
  EXPECT_FALSE(x.command({"ZSCORE", q.dead, not_a_number}).is_nil()) << "a broken counter goes to dead";
  EXPECT_EQ(row("bad", not_a_number)["error"], "row field attempts is not an integer");
  EXPECT_EQ(x.command({"HGET", q.row(not_a_number), "attempts"}).str, "many");
  EXPECT_EQ(x.command({"GET", q.row(wrong_type)}).str, "not a hash");
  EXPECT_EQ(x.command({"GET", q.row(wrong_type_active)}).str, "not a hash");
  const std::string server_log = read_text(server.dir() + "/valkey.log");
  for (const std::string& id : {not_a_number, wrong_type, wrong_type_active}) {
    EXPECT_NE(server_log.find(id), std::string::npos) << id << " should be named in the server's log:\n" << server_log;
  }
  // The id in pending and delayed at once: the claim's promoter moves it
  // first, into the set it already is in, so it runs once, like any job.
  EXPECT_EQ(c.runs[two_sets], 1);
  QueueStats s = stats_of("bad");
  EXPECT_EQ(s.counters["reaped"], 2) << "only the two planted expired leases";
  report_figures("malformed rows among " + std::to_string(kGood) + " good jobs",
                 "completed=" + std::to_string(s.counters["completed"]) +
                     " reaped=" + std::to_string(s.counters["reaped"]) +
                     " good_ran_twice=0 skipped_rows=3 "
                     "two_sets_runs=" +
                     std::to_string(c.runs[two_sets]) + " daemon_alive=" + std::to_string(d.running()));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

// A lane no transition can place a job at, and a stats counter no HINCRBY
// can add to, planted by some other writer: the due job with the bad lane
// stays in delayed (named in the server's log) instead of being promoted
// into no set, the broken counter stays as it is, and every other job of
// the queue runs once and completes with the daemon alive.
TEST_F(MalformedRows, ABadLaneOrABrokenCounterStopsNoOtherJob) {
  const QueueKeys q("lanes");
  const std::string nan_lane = mint_job_id();
  x.command({"HSET", q.row(nan_lane), "state", "delayed", "attempts", "0", "payload", "x", "lane", "nan"});
  x.command({"ZADD", q.delayed, "1", nan_lane});
  x.command({"HSET", q.stats, "completed", "broken"});
  std::vector<std::string> good = put_many("lanes", 20);

  EmqdProcess d(fault_config_head(server.url(), {}) +
                ledger_queue("lanes", 4, 2000, ledger_path(), "a", "cat > /dev/null"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for(
      [&] {
        LedgerCounts c = read_ledger(ledger_path());
        for (const std::string& id : good) {
          if (c.runs.count(id) == 0) return false;
        }
        QueueStats st = stats_of("lanes");
        return st.active == 0 && st.pending == 0;
      },
      seconds(60)))
      << d.log();
  EXPECT_TRUE(d.running()) << d.log();
  LedgerCounts c = read_ledger(ledger_path());
  for (const std::string& id : good) EXPECT_EQ(c.runs[id], 1) << id;
  EXPECT_EQ(c.runs.count(nan_lane), 0u);
  EXPECT_FALSE(x.command({"ZSCORE", q.delayed, nan_lane}).is_nil()) << "the bad lane left delayed";
  EXPECT_EQ(x.command({"HGET", q.row(nan_lane), "state"}).str, "delayed");
  EXPECT_EQ(x.command({"HGET", q.stats, "completed"}).str, "broken");
  EXPECT_NE(read_text(server.dir() + "/valkey.log").find(nan_lane), std::string::npos);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
