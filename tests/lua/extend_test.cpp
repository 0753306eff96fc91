// extend: one reply per lease in the batch, and only the leases still held
// move their deadline.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Extend : public WireTest {};

TEST_F(Extend, RenewsTheLeasesStillHeldAndRepliesOnePerJobInOrder) {
  Lease held = make_active("held", 1000);
  Lease settled = make_active("settled", 1000);
  Lease stale = make_active("stale", 1000);
  ASSERT_EQ(complete(x, q, settled, 0, ""), CompleteResult::Completed);
  std::int64_t stale_deadline = score(q.active, stale.id);

  std::int64_t before = now_ms();
  Reply r = raw({Script::Extend,
                 {q.active, q.row_root},
                 {"60000", held.id, std::to_string(held.epoch), settled.id, std::to_string(settled.epoch), stale.id,
                  std::to_string(stale.epoch + 1), held.id, std::to_string(held.epoch)}});
  std::int64_t after = now_ms();

  ASSERT_EQ(r.type, Reply::Type::Array);
  ASSERT_EQ(r.elements.size(), 4u);
  std::vector<std::int64_t> got;
  for (const Reply& e : r.elements) {
    EXPECT_EQ(e.type, Reply::Type::Integer);
    got.push_back(e.integer);
  }
  EXPECT_EQ(got, (std::vector<std::int64_t>{1, 0, 0, 1}));

  std::int64_t deadline = score(q.active, held.id);
  EXPECT_GE(deadline, before + 60000);
  EXPECT_LE(deadline, after + 60000);
  EXPECT_EQ(score(q.active, stale.id), stale_deadline) << "a stale epoch must not move the deadline";
  EXPECT_EQ(members(q.active), (std::vector<std::string>{stale.id, held.id})) << "in deadline order";
  EXPECT_EQ(row(held.id).at("lease_epoch"), "1");
}

TEST_F(Extend, TheTypedCallAnswersTrueForKeptAndFalseForLost) {
  Lease a = make_active();
  Lease b = make_active();
  ASSERT_EQ(release(x, q, b), ReleaseResult::Released);
  EXPECT_EQ(extend(x, q, 30000, {a, b, {"JOB_missing", 1}}), (std::vector<bool>{true, false, false}));
  EXPECT_TRUE(extend(x, q, 30000, {}).empty());
}

TEST_F(Extend, AnActiveRowMissingFromTheActiveSetIsNotPutBack) {
  // The row says active but the set lost it (a reaper raced us between the
  // two): renewing must not re-add it, or the job would be leased twice.
  Lease l = make_active();
  cmd({"ZREM", q.active, l.id});
  auto before = snapshot();
  EXPECT_EQ(extend(x, q, 30000, {l}), (std::vector<bool>{false}));
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace echomq::test
