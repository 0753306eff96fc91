// Failover: the primary that owns a queue is killed (SIGKILL) in the
// middle of a run and its replica takes over (CLUSTER FAILOVER TAKEOVER on
// the replica, at once: automatic failover waits out cluster-node-timeout,
// which a loaded test machine must not be asked to tune down). Replication
// is asynchronous, so the test holds the ledger to what that allows:
// - no job is lost: every enqueue reached the replica before the run began;
// - a job whose completion reached the replica never runs again;
// - the jobs that do run again are ones the replica still held as pending
//   or active when the primary died (a claim or a completion it never got).
#include <regex>

#include "http_client.h"
#include "cluster_fixture.h"

namespace echomq::test {
namespace {

std::string info_field(ValkeyServer& s, const std::string& section, const std::string& name) {
  Connection c = Connection::open(s.options());
  const std::string info = c.command({"INFO", section}).str;
  const std::size_t at = info.find(name + ":");
  if (at == std::string::npos) return "";
  const std::size_t start = at + name.size() + 1;
  return info.substr(start, info.find('\r', start) - start);
}

class ClusterFailover : public ClusterTest {};

TEST_F(ClusterFailover, PrimaryKilledMidRunLosesNothingReplicated) {
  const std::size_t primary = 0;
  const std::string name = queue_on(primary, "fo");
  const std::size_t replica = cluster.replica_of(primary);
  const int kJobs = 1000, kConcurrency = 4;
  std::vector<std::string> ids = put_many(name, kJobs);
  // Every enqueue on the replica before any job runs.
  ASSERT_TRUE(wait_for(
      [&] {
        return info_field(cluster.node(replica), "replication", "slave_repl_offset") ==
               info_field(cluster.node(primary), "replication", "master_repl_offset");
      },
      seconds(10)));

  const int metrics_port = free_loopback_port();
  std::string yaml = config_head(1) + ledger_queue(name, kConcurrency, 2000, ledger_path());
  const std::string off = "listen: \"\"";
  yaml.replace(yaml.find(off), off.size(), "listen: 127.0.0.1:" + std::to_string(metrics_port));
  EmqdProcess d(yaml);
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return read_ledger(ledger_path()).lines >= kJobs / 4; }, seconds(60))) << d.log();
  cluster.node(primary).kill9();
  const std::size_t ran_at_kill = read_ledger(ledger_path()).distinct();

  // What the replica holds at the instant of promotion: each job's state
  // (no row: completed, keep_completed_s being 0).
  std::map<std::string, std::string> at_promotion;
  std::int64_t completed_on_replica = 0;
  {
    Connection c = Connection::open(cluster.node(replica).options());
    ASSERT_FALSE(c.command({"READONLY"}).is_error());
    QueueKeys q(name);
    std::vector<Command> reads;
    for (const std::string& id : ids) reads.push_back({"HGET", q.row(id), "state"});
    std::vector<Reply> states = c.pipeline(reads);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      at_promotion[ids[i]] = states[i].is_nil() ? "completed" : states[i].str;
    }
    const Reply done = c.command({"HGET", q.stats, "completed"});
    completed_on_replica = done.is_nil() ? 0 : std::stoll(done.str);
    // Before the promotion, health names the node that is gone.
    const std::string dead = "127.0.0.1:" + std::to_string(cluster.node(primary).port());
    HttpAnswer health;
    EXPECT_TRUE(wait_for(
        [&] {
          health = http_get(metrics_port, "/healthz");
          return health.status == 503 && health.body.find("cluster node " + dead + " is missing") != std::string::npos;
        },
        seconds(15)))
        << health.status << " " << health.body;
    const std::string page = http_get(metrics_port, "/metrics").body;
    EXPECT_NE(page.find("emq_valkey_node_up{node=\"" + dead + "\"} 0"), std::string::npos) << page;
    EXPECT_NE(page.find("emq_valkey_up 0"), std::string::npos);
    ASSERT_EQ(cluster.node(replica).cli({"CLUSTER", "FAILOVER", "TAKEOVER"}), "OK\n");
  }
  ASSERT_TRUE(
      wait_for([&] { return info_field(cluster.node(replica), "replication", "role") == "master"; }, seconds(10)));
  ASSERT_NO_THROW(cluster.wait_ok());

  // Each job completes once in the history the new primary keeps.
  ASSERT_TRUE(all_completed(name, kJobs, seconds(120))) << d.log();
  LedgerCounts c = expect_all_ran(name, ids);
  EXPECT_EQ(stats(x, QueueKeys(name)).counters["completed"], kJobs);
  std::size_t active = 0, pending = 0, rerun_pending = 0, rerun_active = 0, rerun_completed = 0;
  for (const auto& [id, state] : at_promotion) {
    active += state == "active";
    pending += state == "pending";
    if (c.runs[id] < 2) continue;
    rerun_pending += state == "pending";
    rerun_active += state == "active";
    rerun_completed += state == "completed";
  }
  EXPECT_EQ(rerun_completed, 0u) << "a job whose completion reached the replica ran again";
  EXPECT_EQ(c.rerun(), rerun_pending + rerun_active);

  report_figures("failover of the queue's primary (SIGKILL, replica takes over)",
                 "jobs=" + std::to_string(kJobs) + " ran_by_kill=" + std::to_string(ran_at_kill) +
                     " replica_at_promotion: completed=" + std::to_string(completed_on_replica) +
                     " active=" + std::to_string(active) + " pending=" + std::to_string(pending) +
                     " | ran_twice=" + std::to_string(c.rerun()) + " (active on replica " +
                     std::to_string(rerun_active) + ", pending on replica " + std::to_string(rerun_pending) +
                     ") rerun_of_replicated_completion=0 lost=0");
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// Failed attempts the claim loop's backoff allows in `spell`: 100 ms
// doubling to 5000 ms between them, and one at the start.
long attempts_allowed(std::chrono::duration<double> spell) {
  long n = 1;
  milliseconds wait(100), waited(0);
  while (waited + wait <= spell) {
    waited += wait;
    wait = std::min(wait * 2, milliseconds(5000));
    ++n;
  }
  return n;
}

// A primary dies and no replica takes over (cluster state fail): the
// queues on that shard can do nothing until it is back. Each claim loop
// says so once, retries on its own backoff, and counts its attempts when
// the shard is back. Before, every map refresh by any of the daemon's
// connections ended every other's backoff: "retry in 5000 ms" was logged
// 3-9 times a second per queue, each a retry 100-200 ms after the last.
TEST_F(ClusterFailover, AShardDownWithoutFailoverIsOneLineAndRetriesAtTheAnnouncedCadence) {
  const std::size_t primary = 1;
  const std::string name = queue_on(primary, "down");
  const std::string other = queue_on(primary, "second");
  const std::size_t replica = cluster.replica_of(primary);
  ASSERT_EQ(cluster.node(replica).cli({"CONFIG", "SET", "cluster-replica-no-failover", "yes"}), "OK\n");
  EmqdProcess d(config_head(0) + ledger_queue(name, 2, 30000, ledger_path()) +
                ledger_queue(other, 2, 30000, ledger_path()));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  put_many(name, 1);
  ASSERT_TRUE(all_completed(name, 1, seconds(30))) << d.log();

  cluster.node(primary).kill9();
  const std::string line = "queue=" + name + " server trouble";
  ASSERT_TRUE(d.wait_log(line, seconds(30))) << d.log();
  ASSERT_TRUE(wait_for(
      [&] {
        return cluster.node(0).cli({"CLUSTER", "INFO"}).find("cluster_state:fail") != std::string::npos;
      },
      seconds(30)));
  // The spell itself: no second line while it lasts (there was one every
  // 100-200 ms).
  EXPECT_FALSE(wait_for([&] { return occurrences(d.log(), line) > 1; }, seconds(6))) << d.log();
  EXPECT_EQ(occurrences(d.log(), "queue=" + other + " server trouble"), 1u) << d.log();

  cluster.node(primary).start();
  const std::string back = "queue=" + name + " the server takes calls again, after ";
  ASSERT_TRUE(d.wait_log(back, seconds(90))) << d.log();
  const std::string log = d.log();
  static const std::regex counted(R"(after (\d+) failed attempts in ([0-9.]+) s)");
  std::smatch m;
  const std::string tail = log.substr(log.find(back));
  ASSERT_TRUE(std::regex_search(tail, m, counted)) << tail;
  const long attempts = std::stol(m[1]);
  const std::chrono::duration<double> spell(std::stod(m[2]));
  // Two of slack: the spell is measured from the first failure to the
  // line, a little past the last attempt.
  EXPECT_LE(attempts, attempts_allowed(spell) + 2)
      << attempts << " attempts in " << spell.count() << " s: not the backoff's cadence\n"
      << log;
  // The shard came back answering CLUSTERDOWN for a while: that change of
  // the server's answer may be one more line.
  EXPECT_LE(occurrences(log, line), 2u) << log;
  report_figures("a shard down without failover", "failed_attempts=" + std::to_string(attempts) + " in " +
                                                      std::to_string(spell.count()) +
                                                      " s, allowed=" + std::to_string(attempts_allowed(spell)) +
                                                      " trouble_lines=" + std::to_string(occurrences(log, line)));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
