// complete: keep_ms 0 deletes the row; keep_ms > 0 keeps it as completed
// with its result, expiring. Lease-lost replies are in fencing_test.cpp.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Complete : public WireTest {};

TEST_F(Complete, KeepZeroDeletesTheRow) {
  Lease l = make_active("work");
  Reply r = raw(complete_call(q, l, 0, "ignored"));
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(decode_complete(r), CompleteResult::Completed);
  EXPECT_FALSE(exists(q.row_root + l.id));
  EXPECT_EQ(zset(q.active), ZSet{});
  // Only the counters remain of the job.
  auto keys = snapshot();
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(hash(q.stats), (Row{{"claimed", "1"}, {"completed", "1"}}));
}

TEST_F(Complete, KeepMsKeepsTheRowCompletedWithItsResultAndATtl) {
  Lease l = make_active("work");
  EXPECT_EQ(complete(x, q, l, 60000, "the answer"), CompleteResult::Completed);
  EXPECT_EQ(row(l.id), (Row{{"state", "completed"},
                            {"attempts", "1"},
                            {"payload", "work"},
                            {"lease_epoch", "1"},
                            {"result", "the answer"}}));
  std::int64_t ttl = pttl(q.row_root + l.id);
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 60000);
  // A completed job is in no set.
  for (const std::string& set : {q.pending, q.active, q.delayed, q.dead}) EXPECT_EQ(zset(set), ZSet{}) << set;
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"completed", 1}}));
}

TEST_F(Complete, AnEmptyResultIsStillWritten) {
  Lease l = make_active();
  EXPECT_EQ(complete(x, q, l, 60000, ""), CompleteResult::Completed);
  EXPECT_EQ(row(l.id).count("result"), 1u);
  EXPECT_EQ(row(l.id).at("result"), "");
}

TEST_F(Complete, AKeptRowIsGoneOnceKeepMsHasPassed) {
  Lease l = make_active();
  ASSERT_EQ(complete(x, q, l, 50, "short-lived"), CompleteResult::Completed);
  EXPECT_TRUE(wait_for([&] { return !exists(q.row_root + l.id); }, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace echomq::test
