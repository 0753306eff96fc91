// The outbox drainer against a real valkey-server, on its own thread as
// emqd runs it: a child that finished is told to its waiting parent (its
// result recorded there, the last one releasing it, a death failing it),
// its outbox entry acknowledged, and each counted; an entry whose parent is
// gone is acknowledged and said so.
#include "duties/outbox_drainer.h"

#include <gtest/gtest.h>

#include "echomq/flows.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "flow_queues.h"
#include "process_probe.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

class OutboxDrainerTest : public ::testing::Test {
 protected:
  // A parent in "reports" waiting on `children` children in "pages", each
  // claimed: their leases, in the children's order.
  std::vector<Lease> parent_with_children(int children) {
    const FlowJob flow = test::report_with_pages(x, children);
    parent = flow.id;
    std::vector<Lease> leases;
    for (const FlowJob& child : flow.children) {
      const std::vector<ClaimedJob> got = claim(x, pages, {30000, 1, 0});
      EXPECT_EQ(got.at(0).id, child.id);
      leases.push_back({got.at(0).id, got.at(0).lease_epoch});
    }
    return leases;
  }
  // Settles a child as a flow-aware daemon does: into the outbox.
  void complete_child(const Lease& l, const std::string& result) {
    ASSERT_EQ(decode_complete(x.eval_batch({complete_call(pages, l, 0, result, FlowMode::Flow)}).at(0)),
              CompleteResult::Completed);
  }
  std::int64_t outbox_size() { return x.command({"ZCARD", pages.outbox}).integer; }
  std::string parent_state() {
    const std::optional<JobRow> row = inspect(x, reports, parent);
    return row ? row->fields.at("state") : "(gone)";
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  Config config = test::reports_and_pages();
  const QueueKeys reports{"reports"}, pages{"pages"};
  Metrics metrics{{"reports", "pages"}, "test"};
  QueueMetrics& told = metrics.queue("pages");
  std::string parent;
};

TEST_F(OutboxDrainerTest, TellsAWaitingParentAndAcknowledgesTheOutboxEntry) {
  const std::vector<Lease> children = parent_with_children(2);
  OutboxDrainer drainer(config, server.options(), metrics);
  drainer.start();

  complete_child(children[0], "page one");
  ASSERT_TRUE(test::wait_for([&] { return told.children_done_completed->Value() == 1; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return outbox_size() == 0; }, seconds(5)));
  EXPECT_FALSE(inspect(x, pages, children[0].id)) << "acknowledged: the row goes as complete would have done";
  EXPECT_EQ(parent_state(), "waiting") << "one child is still awaited";
  const std::vector<ChildResult> results = decode_results(x.command(results_read(reports, parent)));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].id, children[0].id);
  EXPECT_EQ(results[0].outcome, ChildOutcome::Completed);
  EXPECT_EQ(results[0].text, "page one");

  complete_child(children[1], "page two");
  ASSERT_TRUE(test::wait_for([&] { return parent_state() == "pending"; }, seconds(5)));
  EXPECT_EQ(stats(x, reports).pending, 1);
  EXPECT_EQ(x.command({"ZCARD", reports.waiting}).integer, 0);
  EXPECT_TRUE(test::wait_for([&] { return outbox_size() == 0; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return told.children_done_completed->Value() == 2; }, seconds(5)));
  EXPECT_EQ(told.children_done_dead->Value(), 0);
}

TEST_F(OutboxDrainerTest, ADeadChildFailsItsParentUnderFail) {
  const std::vector<Lease> children = parent_with_children(2);
  OutboxDrainer drainer(config, server.options(), metrics);
  drainer.start();
  const ScriptCall fail = fail_call(pages, children[0], {"corrupt page", 5, 0, true}, FlowMode::Flow);
  ASSERT_EQ(decode_fail(x.eval_batch({fail}).at(0)), FailResult::Dead);
  ASSERT_TRUE(test::wait_for([&] { return parent_state() == "dead"; }, seconds(5)));
  EXPECT_EQ(inspect(x, reports, parent)->fields.at("error"),
            "child " + pages.ref(children[0].id) + " died: corrupt page");
  EXPECT_TRUE(test::wait_for([&] { return told.children_done_dead->Value() == 1; }, seconds(5)));
  EXPECT_TRUE(test::wait_for([&] { return outbox_size() == 0; }, seconds(5)));
  EXPECT_EQ(stats(x, pages).dead, 1) << "a dead child stays dead, for an operator to retry";
}

TEST_F(OutboxDrainerTest, AnEntryWhoseParentIsGoneIsAcknowledgedAndSaidSo) {
  test::LogCapture log;
  const std::vector<Lease> children = parent_with_children(1);
  // Deleted by hand, say: its row, deps and place in the waiting set.
  x.command({"DEL", reports.row(parent), reports.deps(parent)});
  x.command({"ZREM", reports.waiting, parent});
  complete_child(children[0], "late page");
  OutboxDrainer drainer(config, server.options(), metrics);
  drainer.start();
  ASSERT_TRUE(test::wait_for([&] { return outbox_size() == 0; }, seconds(5)));
  EXPECT_TRUE(log.contains("job=" + children[0].id + " finished but its parent reports:" + parent + " is gone"))
      << ::testing::PrintToString(log.lines());
  EXPECT_EQ(told.children_done_completed->Value(), 0) << "no parent was told";
}

}  // namespace
}  // namespace echomq::daemon
