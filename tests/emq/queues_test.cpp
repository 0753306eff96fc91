// emq queues and emq forget.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class QueuesCli : public CliTest {
 protected:
  bool known(const std::string& name) {
    std::vector<std::string> names = known_queues(x());
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

TEST_F(QueuesCli, ListsKnownNamesSortedOnePerLine) {
  register_queues(x(), {queue() + ".b", queue() + ".a", "bad name{x}"});
  EmqResult r = emq({"queues"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  auto a = std::find(lines.begin(), lines.end(), queue() + ".a");
  auto b = std::find(lines.begin(), lines.end(), queue() + ".b");
  ASSERT_NE(a, lines.end()) << r.out;
  ASSERT_NE(b, lines.end()) << r.out;
  EXPECT_LT(a, b);
  EXPECT_EQ(std::find(lines.begin(), lines.end(), "bad name{x}"), lines.end());
  EXPECT_NE(r.err.find("skipping 'bad name{x}'"), std::string::npos) << r.err;

  r = emq({"queues", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(std::find(j.begin(), j.end(), queue() + ".a"), j.end()) << r.out;
  x().command({"SREM", std::string(kQueuesKey), "bad name{x}"});
}

TEST_F(QueuesCli, ForgetRefusesWhileJobsAreLeftAndSaysWhich) {
  register_queues(x(), {queue()});
  ASSERT_EQ(enqueue(x(), keys(), "JOB_f1", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_f2", "p", {0, 9000000000000}), EnqueueResult::Enqueued);
  EmqResult r = emq({"forget", queue()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("still holds 1 pending, 1 delayed"), std::string::npos) << r.err;
  EXPECT_TRUE(known(queue()));

  ASSERT_EQ(cancel(x(), keys(), "JOB_f1"), CancelResult::Removed);
  ASSERT_EQ(cancel(x(), keys(), "JOB_f2"), CancelResult::Removed);
  r = emq({"forget", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "forgot " + queue() + "\n");
  EXPECT_FALSE(known(queue()));

  r = emq({"forget", queue()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nothing to forget"), std::string::npos) << r.err;
  EXPECT_EQ(emq({"forget", "bad name"}).exit_code, 2);
}

}  // namespace
}  // namespace echomq::test
