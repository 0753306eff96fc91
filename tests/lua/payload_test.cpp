// Payloads are opaque bytes: every byte value, NULs, nothing at all, and
// 10 MiB come back from claim exactly as enqueue took them.
#include <random>

#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Payload : public WireTest {
 protected:
  // enqueue -> claim, and the row's own copy, byte for byte.
  void expect_round_trip(const std::string& payload) {
    std::string id = enqueue_new(payload);
    std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].id, id);
    EXPECT_EQ(jobs[0].payload.size(), payload.size());
    EXPECT_TRUE(jobs[0].payload == payload) << "claimed payload differs";
    Reply stored = cmd({"HGET", q.row_root + id, "payload"});
    EXPECT_TRUE(stored.str == payload) << "stored payload differs";
    EXPECT_EQ(complete(x, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  }
};

TEST_F(Payload, NulBytesSurvive) { expect_round_trip(std::string("a\0b\0\0c\0", 7)); }

TEST_F(Payload, EveryByteValueSurvives) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (int i = 255; i >= 0; --i) all.push_back(static_cast<char>(i));
  expect_round_trip(all);
}

TEST_F(Payload, AnEmptyPayloadSurvives) { expect_round_trip(""); }

TEST_F(Payload, TenMebibytesSurvive) {
  std::string big(10 * 1024 * 1024, '\0');
  std::mt19937_64 rng(20240229);
  for (char& c : big) c = static_cast<char>(rng());
  expect_round_trip(big);
}

TEST_F(Payload, ABinaryResultIsKeptExactly) {
  std::string result;
  for (int i = 0; i < 256; ++i) result.push_back(static_cast<char>(255 - i));
  Lease l = make_active();
  ASSERT_EQ(complete(x, q, l, 60000, result), CompleteResult::Completed);
  EXPECT_TRUE(row(l.id).at("result") == result);
}

}  // namespace
}  // namespace echomq::test
