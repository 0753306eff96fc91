// emq purge: every job of one state goes through cancel, rows and all; a
// running job is never taken; a script must say --yes.
#include <gtest/gtest.h>

#include "cli_fixture.h"
#include "echomq/flows.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class PurgeCli : public CliTest {
 protected:
  std::int64_t rows() {
    Reply r = x().command({"KEYS", keys().row_root + "*"});  // a test's own few keys
    return static_cast<std::int64_t>(r.elements.size());
  }
};

TEST_F(PurgeCli, PendingGoesWithItsRowsAndOtherStatesStay) {
  for (int i = 0; i < 2500; ++i) {
    ASSERT_EQ(enqueue(x(), keys(), "JOB_p" + std::to_string(i), "p"), EnqueueResult::Enqueued);
  }
  ASSERT_EQ(enqueue(x(), keys(), "JOB_later", "p", {0, 9000000000000}), EnqueueResult::Enqueued);
  ASSERT_EQ(rows(), 2501);

  EmqResult r = emq({"purge", queue(), "--state", "pending", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2500\n");
  QueueStats s = stats(x(), keys());
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.delayed, 1);
  EXPECT_EQ(rows(), 1) << "every purged id's row went with it";

  r = emq({"purge", queue(), "--state", "delayed", "-y"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(rows(), 0);

  r = emq({"purge", queue(), "--state", "dead", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("no dead jobs"), std::string::npos) << r.err;
}

TEST_F(PurgeCli, ActiveIsRefused) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_run", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(claim(x(), keys(), {30000, 1, 0}).size(), 1u);
  EmqResult r = emq({"purge", queue(), "--state", "active", "--yes"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("running jobs belong to their workers"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).active, 1);
}

TEST_F(PurgeCli, WaitingIsRefused) {
  FlowNode parent;
  parent.queue = queue();
  parent.payload = "p";
  parent.children.push_back({"purge-kids", "c", 0, "fail", "", {}});
  enqueue_flow(x(), parent);
  EmqResult r = emq({"purge", queue(), "--state", "waiting", "--yes"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a waiting parent runs once its children finish"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).waiting, 1);
}

TEST_F(PurgeCli, WithoutATerminalItWantsYesAndDeletesNothing) {
  ASSERT_EQ(enqueue(x(), keys(), "JOB_keep", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"purge", queue(), "--state", "pending"}, "y\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Pass --yes"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(stats(x(), keys()).pending, 1);
}

TEST_F(PurgeCli, AnIdWhoseRowSaysActiveIsLeftAndNamed) {
  // A peer left an id in pending whose row says active: cancel refuses it,
  // and the purge reads past it instead of turning on it for ever.
  x().command({"HSET", keys().row_root + "JOB_stuck", "state", "active", "attempts", "1", "payload", "p"});
  x().command({"ZADD", keys().pending, "-1", "JOB_stuck"});
  ASSERT_EQ(enqueue(x(), keys(), "JOB_ok", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"purge", queue(), "--state", "pending", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_NE(r.err.find("1 ids stay in the pending set"), std::string::npos) << r.err;
  EXPECT_EQ(stats(x(), keys()).pending, 1);
}

TEST_F(PurgeCli, BadArgumentsAreUsage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"purge", queue()},
           {"purge", queue(), "--state", "completed", "--yes"},
           {"purge", "bad queue", "--state", "dead", "--yes"},
       }) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace echomq::test
