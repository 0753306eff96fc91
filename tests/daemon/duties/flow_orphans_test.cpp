// The orphan watch against a real valkey-server, on its own thread as emqd
// runs it (a round every 2 s): a parent waiting on a child whose row is gone
// shows in emq_flow_orphans of its queue and is named in the log once per
// child; a healthy flow is no orphan; the gauge falls back once the child
// is enqueued again, as docs/operations.md says to.
#include "duties/flow_orphans.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "echomq/flows.h"
#include "flow_queues.h"
#include "process_probe.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

class FlowOrphansTest : public ::testing::Test {
 protected:
  FlowJob flow(int children, const FlowJob* again = nullptr) { return test::report_with_pages(x, children, again); }
  void lose_row(const FlowJob& child) { x.command({"DEL", pages.row(child.id)}); }
  double orphans(const std::string& queue) { return metrics.queue(queue).flow_orphans->Value(); }
  // How many log lines name `parent` an orphan of `child`.
  long reports_of(const FlowJob& parent, const FlowJob& child) {
    const std::string line = "job=" + parent.id + " is an orphan: it waits on child " + pages.ref(child.id);
    const std::vector<std::string> lines = log.lines();
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(line) != std::string::npos; });
  }

  test::LogCapture log;
  test::ValkeyServer server;
  Executor x{server.options()};
  Config config = test::reports_and_pages();
  const QueueKeys pages{"pages"};
  Metrics metrics{{"reports", "pages"}, "test"};
};

TEST_F(FlowOrphansTest, AParentWaitingOnAChildWhoseRowIsGoneIsCountedAndNamedOncePerChild) {
  const FlowJob healthy = flow(1);
  const FlowJob orphan = flow(2);
  lose_row(orphan.children[0]);
  FlowOrphans watch(config, server.options(), metrics);
  watch.start();
  ASSERT_TRUE(test::wait_for([&] { return orphans("reports") == 1; }, seconds(5)));
  EXPECT_EQ(reports_of(orphan, orphan.children[0]), 1) << ::testing::PrintToString(log.lines());
  EXPECT_EQ(reports_of(healthy, healthy.children[0]), 0);
  EXPECT_EQ(orphans("pages"), 0) << "the parents are the orphans, in their own queue";

  // The next round finds the second child gone too: named, while the first
  // is not named again; still one parent.
  lose_row(orphan.children[1]);
  ASSERT_TRUE(test::wait_for([&] { return reports_of(orphan, orphan.children[1]) == 1; }, seconds(10)));
  EXPECT_EQ(reports_of(orphan, orphan.children[0]), 1);
  EXPECT_EQ(orphans("reports"), 1);
}

TEST_F(FlowOrphansTest, TheGaugeFallsBackOnceTheChildIsEnqueuedAgain) {
  const FlowJob orphan = flow(1);
  lose_row(orphan.children[0]);
  FlowOrphans watch(config, server.options(), metrics);
  watch.start();
  ASSERT_TRUE(test::wait_for([&] { return orphans("reports") == 1; }, seconds(5)));
  const FlowJob again = flow(1, &orphan);
  ASSERT_EQ(again.children.at(0).result, EnqueueResult::Enqueued);
  EXPECT_TRUE(test::wait_for([&] { return orphans("reports") == 0; }, seconds(10)));
}

// Issue 37, row 13: an id left in the waiting set after its row was
// deleted by hand was never said; now once, with the command that clears
// it, and counted with the orphans.
TEST_F(FlowOrphansTest, AWaitingIdWithoutARowIsNamedOnceAndCancelClearsIt) {
  const FlowJob lost = flow(1);
  const QueueKeys reports{"reports"};
  x.command({"DEL", reports.row(lost.id)});
  FlowOrphans watch(config, server.options(), metrics);
  watch.start();
  const std::string said = "job=" + lost.id + " is in the waiting set but its row is gone";
  ASSERT_TRUE(test::wait_for([&] { return log.contains(said); }, seconds(5)));
  EXPECT_TRUE(log.contains("emq cancel reports " + lost.id));
  // The gauge is set when the round ends, after the line is logged.
  EXPECT_TRUE(test::wait_for([&] { return orphans("reports") == 1; }, seconds(5)));
  ASSERT_EQ(cancel(x, reports, lost.id), CancelResult::Removed);
  EXPECT_EQ(x.command({"EXISTS", reports.deps(lost.id)}).integer, 0);
  EXPECT_TRUE(test::wait_for([&] { return orphans("reports") == 0; }, seconds(10)));
  const std::vector<std::string> lines = log.lines();
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [&](const std::string& l) { return l.find(said) != std::string::npos; }),
            1);
}

}  // namespace
}  // namespace echomq::daemon
