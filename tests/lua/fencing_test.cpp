// Fencing: complete, fail, extend and release count only with the lease
// they were claimed with. A late answer with a stale lease replies "lease
// lost" and changes nothing at all: the whole queue is compared before and
// after.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::seconds;

struct StaleCase {
  const char* name;
};

class Fencing : public WireTest, public ::testing::WithParamInterface<StaleCase> {
 protected:
  // Builds the situation the case names and returns the lease a slow
  // worker still holds. `current` is the lease that does count, if any.
  Lease stale_lease(const std::string& name, std::optional<Lease>& current) {
    if (name == "ReclaimedAfterReap") {
      Lease old = make_active("p", 50);
      EXPECT_TRUE(wait_for([&] { return reap(x, q, 5, 100).requeued == 1; }, seconds(5)));
      current = claim_one(old.id);
      EXPECT_EQ(current->epoch, old.epoch + 1);
      return old;
    }
    if (name == "EpochFromTheFuture") {
      current = make_active();
      return {current->id, current->epoch + 1};
    }
    if (name == "NeverClaimed") return {enqueue_new(), 0};
    Lease l = make_active();
    if (name == "Released") {
      EXPECT_EQ(release(x, q, l), ReleaseResult::Released);
    } else if (name == "CompletedAndKept") {
      EXPECT_EQ(complete(x, q, l, 600000, "done"), CompleteResult::Completed);
    } else if (name == "CompletedAndGone") {
      EXPECT_EQ(complete(x, q, l, 0, ""), CompleteResult::Completed);
    } else if (name == "FailedForRetryLater") {
      EXPECT_EQ(fail(x, q, l, {"x", 5, 60000, false}), FailResult::Retry);
    } else if (name == "FailedForRetryNow") {
      EXPECT_EQ(fail(x, q, l, {"x", 5, 0, false}), FailResult::Retry);
    } else if (name == "Dead") {
      EXPECT_EQ(fail(x, q, l, {"x", 5, 0, true}), FailResult::Dead);
    } else if (name == "Cancelled") {
      EXPECT_EQ(release(x, q, l), ReleaseResult::Released);
      EXPECT_EQ(cancel(x, q, l.id), CancelResult::Removed);
    } else {
      ADD_FAILURE() << "no situation named " << name;
    }
    return l;
  }
};

TEST_P(Fencing, AStaleLeaseChangesNothing) {
  std::optional<Lease> current;
  Lease stale = stale_lease(GetParam().name, current);
  auto before = snapshot();

  EXPECT_EQ(complete(x, q, stale, 0, "late"), CompleteResult::LeaseLost);
  EXPECT_EQ(snapshot(), before) << "complete keep_ms 0";
  EXPECT_EQ(complete(x, q, stale, 60000, "late"), CompleteResult::LeaseLost);
  EXPECT_EQ(snapshot(), before) << "complete keep_ms > 0";
  EXPECT_EQ(fail(x, q, stale, {"late", 5, 1000, false}), FailResult::LeaseLost);
  EXPECT_EQ(snapshot(), before) << "fail for retry";
  EXPECT_EQ(fail(x, q, stale, {"late", 1, 0, true}), FailResult::LeaseLost);
  EXPECT_EQ(snapshot(), before) << "fail permanent";
  EXPECT_EQ(extend(x, q, 600000, {stale}), (std::vector<bool>{false}));
  EXPECT_EQ(snapshot(), before) << "extend";
  EXPECT_EQ(release(x, q, stale), ReleaseResult::LeaseLost);
  EXPECT_EQ(snapshot(), before) << "release";

  // The raw replies are the wire's 0, not something the typed API made up.
  EXPECT_EQ(raw(complete_call(q, stale, 0, "")).integer, 0);
  EXPECT_EQ(raw(fail_call(q, stale, {"late", 5, 0, false})).integer, 0);
  EXPECT_EQ(raw(release_call(q, stale)).integer, 0);
  EXPECT_EQ(snapshot(), before);

  // The lease that does count still works: the fence is not a wall.
  if (current) {
    EXPECT_EQ(extend(x, q, 30000, {*current}), (std::vector<bool>{true}));
    EXPECT_EQ(complete(x, q, *current, 0, ""), CompleteResult::Completed);
  }
}

INSTANTIATE_TEST_SUITE_P(Situations, Fencing,
                         ::testing::Values(StaleCase{"ReclaimedAfterReap"}, StaleCase{"EpochFromTheFuture"},
                                           StaleCase{"NeverClaimed"}, StaleCase{"Released"},
                                           StaleCase{"CompletedAndKept"}, StaleCase{"CompletedAndGone"},
                                           StaleCase{"FailedForRetryLater"}, StaleCase{"FailedForRetryNow"},
                                           StaleCase{"Dead"}, StaleCase{"Cancelled"}),
                         [](const ::testing::TestParamInfo<StaleCase>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace echomq::test
