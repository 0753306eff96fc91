// emq promote QUEUE ID...: delayed jobs run now; anything else is left as
// it is and named.
#include <gtest/gtest.h>

#include "cli_fixture.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class PromoteCli : public CliTest {
 protected:
  void enqueue_delayed(const std::string& id) {
    ASSERT_EQ(enqueue(x(), keys(), id, "p", {0, x().server_time_ms() + 3600000}), EnqueueResult::Enqueued);
  }
  std::string state_of(const std::string& id) { return x().command({"HGET", keys().row(id), "state"}).str; }
};

TEST_F(PromoteCli, DelayedJobsGoToPendingAndTheCountIsPrinted) {
  enqueue_delayed("JOB_p1");
  enqueue_delayed("JOB_p2");
  enqueue_delayed("JOB_p3");
  EmqResult r = emq({"promote", queue(), "JOB_p1", "JOB_p3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  EXPECT_EQ(state_of("JOB_p1"), "pending");
  EXPECT_EQ(state_of("JOB_p2"), "delayed");
  EXPECT_EQ(state_of("JOB_p3"), "pending");
  EXPECT_EQ(claim(x(), keys(), {30000, 5, 0}).size(), 2u) << "both run now, an hour early";
}

TEST_F(PromoteCli, AJobThatIsNotDelayedIsNamedAndExitIsOne) {
  enqueue_delayed("JOB_p1");
  ASSERT_EQ(enqueue(x(), keys(), "JOB_now", "p"), EnqueueResult::Enqueued);
  EmqResult r = emq({"promote", queue(), "JOB_now", "JOB_p1", "JOB_none"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "1\n");
  EXPECT_NE(r.err.find("JOB_now is not in the delayed set of queue " + queue()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("JOB_none is not in the delayed set"), std::string::npos) << r.err;
  EXPECT_EQ(state_of("JOB_p1"), "pending");
}

TEST_F(PromoteCli, AnIdThatIsNotJobNamespacedIsRefusedBeforeTheServer) {
  EmqResult r = emq({"promote", queue(), "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace echomq::test
