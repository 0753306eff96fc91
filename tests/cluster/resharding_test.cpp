// Live resharding: one queue's slot moves to another primary (SETSLOT
// MIGRATING/IMPORTING, MIGRATE of its keys 50 at a time, SETSLOT NODE)
// while emqd runs its jobs. While the slot moves, the queue's scripts
// answer TRYAGAIN (each declares keys that do not exist, such as the row
// root, and the server refuses a multi-key call it cannot place); the
// claim loop waits that out, then follows the slot through MOVED;
// every job runs at least once, none is left in a set, and a stale lease
// is still refused on the new owner.
#include "cluster_fixture.h"

namespace echomq::test {
namespace {

class ClusterResharding : public ClusterTest {};

TEST_F(ClusterResharding, OneQueuesSlotMovesWhileItsJobsRun) {
  const std::string name = queue_on(0, "moving");
  const std::uint16_t slot = key_slot(name);
  const int kJobs = 600;
  std::vector<std::string> ids = put_many(name, kJobs);

  EmqdProcess d(config_head(1) + ledger_queue(name, 4, 30000, ledger_path()));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return read_ledger(ledger_path()).lines >= 20; }, seconds(30))) << d.log();

  const std::int64_t pending_at_start = stats(x, QueueKeys(name)).pending;
  ASSERT_GT(pending_at_start, 0) << "the run ended before the move began";
  const std::size_t ran_before = read_ledger(ledger_path()).lines;
  const auto t0 = std::chrono::steady_clock::now();
  int batches = 0;
  cluster.migrate_slot(slot, 0, 2, 50, [&] { ++batches; });
  const double move_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t ran_during = read_ledger(ledger_path()).lines - ran_before;
  EXPECT_EQ(cluster.owner_of(slot), 2u);
  // The wakeup follows the queue to its new owner.
  EXPECT_TRUE(
      d.wait_log("wakeup: listening on cluster node 127.0.0.1:" + std::to_string(cluster.node(2).port()), seconds(10)))
      << d.log();

  ASSERT_TRUE(all_completed(name, kJobs, seconds(90))) << d.log();
  LedgerCounts c = expect_all_ran(name, ids);
  EXPECT_EQ(stats(x, QueueKeys(name)).counters["completed"], kJobs);

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();

  // Fencing on the new owner: a lease that was given up is refused.
  QueueKeys q(name);
  ASSERT_EQ(enqueue(x, q, "JOB_fenced", "f"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> first = claim(x, q, ClaimArgs{});
  ASSERT_EQ(first.size(), 1u);
  const Lease stale{first[0].id, first[0].lease_epoch};
  EXPECT_EQ(release(x, q, stale), ReleaseResult::Released);
  std::vector<ClaimedJob> again = claim(x, q, ClaimArgs{});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(complete(x, q, stale, 0, "late"), CompleteResult::LeaseLost) << "a stale lease completed";
  EXPECT_EQ(complete(x, q, Lease{again[0].id, again[0].lease_epoch}, 0, "ok"), CompleteResult::Completed);

  report_figures("live resharding of one queue's slot",
                 "jobs=" + std::to_string(kJobs) + " slot=" + std::to_string(slot) +
                     " pending_at_start=" + std::to_string(pending_at_start) + " batches=" + std::to_string(batches) +
                     " move_s=" + std::to_string(move_s) + " ran_during_move=" + std::to_string(ran_during) +
                     " ran_twice=" + std::to_string(c.rerun()) + " lost=0 left_in_sets=0");
}

}  // namespace
}  // namespace echomq::test
