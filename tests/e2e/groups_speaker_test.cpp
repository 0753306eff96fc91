// An emq/1 speaker beside a group-aware emqd (docs/protocol.md, "Groups",
// "emq/1 speakers"): the speaker's calls carry the KEYS emq/1 names and no
// group block. It never sees a grouped job that is pending, its reap sends
// a counted grouped job to pending and leaves its group's count high, and
// the daemon still runs every grouped job exactly once and leaves no group
// key behind.
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

class GroupsBesideEmq1 : public E2E {
 protected:
  // The call as an emq/1 speaker makes it: the group block left out.
  ScriptCall emq1(ScriptCall call) const {
    auto block = std::find(call.keys.begin(), call.keys.end(), q.gq_root);
    if (block != call.keys.end()) call.keys.erase(block, block + 7);
    return call;
  }
  void add(const std::string& group, int n) {
    EnqueueOptions o;
    o.group = group;
    for (int i = 0; i < n; ++i) ASSERT_EQ(enqueue(x, q, mint_job_id(), group, o), EnqueueResult::Enqueued);
  }
  std::int64_t counted() {
    return x.command({"ZCARD", q.gact("A")}).integer + x.command({"ZCARD", q.gact("B")}).integer;
  }

  const QueueKeys q{"mixed"};
};

TEST_F(GroupsBesideEmq1, TheSpeakerLosesNoGroupedJobAndTheCountsHeal) {
  add("A", 20);
  add("B", 20);
  for (int i = 0; i < 10; ++i) enqueue(x, q, mint_job_id(), "-");

  // The speaker's claim takes the ungrouped jobs only.
  std::vector<ClaimedJob> mine = decode_claim(x.eval(emq1(claim_call(q, {60000, 100, 0}))));
  ASSERT_EQ(mine.size(), 10u);
  for (const ClaimedJob& j : mine) {
    EXPECT_EQ(j.payload, "-") << "an emq/1 claim handed out a grouped job";
    EXPECT_EQ(decode_complete(x.eval(emq1(complete_call(q, {j.id, j.lease_epoch}, 60000, "")))),
              CompleteResult::Completed);
  }

  // A group-aware worker leases four grouped jobs and dies; the speaker's
  // reap sends them to pending and tells no group.
  ASSERT_EQ(claim(x, q, {1, 4, 0}).size(), 4u);
  ASSERT_EQ(counted(), 4);
  const ScriptCall reap1{Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root, q.outbox}, {"5", "100"}};
  ASSERT_TRUE(wait_for(
      [&] {
        return x.eval(reap1).elements.at(0).integer > 0 && x.command({"ZCARD", q.active}).integer == 0;
      },
      seconds(5)));
  ASSERT_EQ(x.command({"ZCARD", q.pending}).integer, 4) << "the emq/1 reap puts grouped jobs in pending";
  ASSERT_EQ(counted(), 4) << "and leaves their groups' counts as they were";

  EmqdProcess d(config_head(server) + "  - name: mixed\n    concurrency: 4\n    handler:\n      type: exec\n" +
                ledger_handler_yaml(ledger_path(), "d", "cat > /dev/null"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(settled("mixed", 50)) << d.log();
  const LedgerCounts runs = read_ledger(ledger_path());
  EXPECT_EQ(runs.distinct(), 40u) << "every grouped job ran";
  EXPECT_EQ(runs.rerun(), 0u) << "and none twice";
  EXPECT_TRUE(wait_for(
      [&] {
        return x.command({"EXISTS", q.gq("A"), q.gq("B"), q.gact("A"), q.gact("B"), q.grp("A"), q.grp("B"), q.gidx})
                   .integer == 0;
      },
      seconds(10)))
      << "every group's keys should be gone once its jobs are done";
}

}  // namespace
}  // namespace echomq::test
