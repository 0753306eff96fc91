#include <gtest/gtest.h>

#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "valkey_server.h"

namespace echomq {
namespace {

TEST(Smoke, EnqueueClaimComplete) {
  test::ValkeyServer server;
  Executor x(server.options());
  QueueKeys q("smoke");
  std::string id = mint_job_id();
  EXPECT_EQ(enqueue(x, q, id, "hello"), EnqueueResult::Enqueued);
  auto jobs = claim(x, q, {30000, 10, 10});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].payload, "hello");
  EXPECT_EQ(complete(x, q, {jobs[0].id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
}

}  // namespace
}  // namespace echomq
