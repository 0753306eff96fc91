// release: a graceful stop gives the job back, uncounted. Lease-lost replies
// are in fencing_test.cpp.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Release : public WireTest {};

TEST_F(Release, GivesTheJobBackToPendingAtItsLaneUncounted) {
  std::string id = enqueue_new("work", {-2, std::nullopt});
  Lease l = claim_one(id);
  Reply r = raw(release_call(q, l));
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(decode_release(r), ReleaseResult::Released);
  // attempts back to 0, no failures or error fields: it did not fail.
  EXPECT_EQ(row(id),
            (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", "work"}, {"lane", "-2"}, {"lease_epoch", "1"}}));
  EXPECT_EQ(zset(q.pending), (ZSet{{id, -2}}));
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"released", 1}}));
}

TEST_F(Release, KeepsEarlierFailuresAndTheNextClaimMintsANewEpoch) {
  std::string id = enqueue_new();
  Lease first = claim_one(id);
  ASSERT_EQ(fail(x, q, first, {"flaky", 5, 0, false}), FailResult::Retry);
  Lease second = claim_one(id);
  ASSERT_EQ(row(id).at("attempts"), "2");
  ASSERT_EQ(release(x, q, second), ReleaseResult::Released);
  EXPECT_EQ(row(id).at("attempts"), "1");
  EXPECT_EQ(row(id).at("failures"), "1");
  EXPECT_EQ(row(id).at("error"), "flaky");

  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].attempt, 2);
  EXPECT_EQ(jobs[0].lease_epoch, 3);
}

}  // namespace
}  // namespace echomq::test
