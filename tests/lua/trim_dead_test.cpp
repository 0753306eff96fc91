// trim_dead: dead rows go by age (older_than_ms), then by count (max_keep,
// 0 meaning no count limit). Deaths are dated apart by rewriting their dead
// score, as if they had died that long ago.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

constexpr std::int64_t kMinute = 60000;
constexpr std::int64_t kHour = 60 * kMinute;
constexpr std::int64_t kTenYears = 10LL * 365 * 24 * kHour;

class TrimDead : public WireTest {
 protected:
  // A dead job that died `ago_ms` before now on the server's clock.
  std::string dead_since(std::int64_t ago_ms) {
    std::string id = make_dead();
    cmd({"ZADD", q.dead, "XX", std::to_string(now_ms() - ago_ms), id});
    return id;
  }
};

TEST_F(TrimDead, DeletesTheRowsThatDiedLongerAgoThanOlderThanMs) {
  std::string ancient = dead_since(2 * kHour);
  std::string recent = dead_since(30 * kMinute);
  std::string fresh = dead_since(0);
  std::string alive = enqueue_new("not dead");

  Reply r = raw({Script::TrimDead, {q.dead, q.row_root}, {std::to_string(kHour), "0"}});
  EXPECT_EQ(r.type, Reply::Type::Integer);
  EXPECT_EQ(r.integer, 1);
  EXPECT_FALSE(exists(q.row_root + ancient));
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{recent, fresh}));
  EXPECT_EQ(row(recent).at("state"), "dead");
  EXPECT_EQ(row(fresh).at("state"), "dead");
  EXPECT_EQ(row(alive).at("state"), "pending");
}

TEST_F(TrimDead, KeepsOnlyTheMaxKeepNewest) {
  std::vector<std::string> oldest_first;
  for (int i = 5; i >= 1; --i) oldest_first.push_back(dead_since(i * kMinute));
  EXPECT_EQ(trim_dead(x, q, kTenYears, 2), 3);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{oldest_first[3], oldest_first[4]}));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(exists(q.row_root + oldest_first[i])) << i;
  for (int i = 3; i < 5; ++i) EXPECT_EQ(row(oldest_first[i]).at("state"), "dead") << i;
  EXPECT_EQ(trim_dead(x, q, kTenYears, 2), 0) << "already within max_keep";
}

TEST_F(TrimDead, MaxKeepZeroSetsNoCountLimit) {
  for (int i = 0; i < 3; ++i) dead_since(i * kMinute);
  auto before = snapshot();
  EXPECT_EQ(trim_dead(x, q, kTenYears, 0), 0);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(TrimDead, AgeFirstThenCount) {
  std::string a = dead_since(2 * kHour);
  std::string b = dead_since(3 * kMinute);
  std::string c = dead_since(2 * kMinute);
  std::string d = dead_since(1 * kMinute);
  // a goes by age; of b, c, d the oldest goes to leave max_keep 2.
  EXPECT_EQ(trim_dead(x, q, kHour, 2), 2);
  EXPECT_EQ(members(q.dead), (std::vector<std::string>{c, d}));
  EXPECT_FALSE(exists(q.row_root + a));
  EXPECT_FALSE(exists(q.row_root + b));
}

}  // namespace
}  // namespace echomq::test
