#include "echomq/job_id.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "echomq/errors.h"

namespace echomq {
namespace {

struct IdCase {
  std::string id;
  bool valid;
};

TEST(JobId, ValidationTable) {
  const std::vector<IdCase> cases = {
      {"JOB_1", true},
      {"JOB_01JD3Z8X5W6Q7R8S9T0V1W2X3Y", true},
      {"JOB_a.b:c-d_e", true},
      {"JOB_" + std::string(128, 'z'), true},
      {"JOB_" + std::string(129, 'z'), false},
      {"JOB_", false},
      {"JOB", false},
      {"JOBX1", false},
      {"job_1", false},
      {"TASK_1", false},
      {"", false},
      {"JOB_a b", false},
      {"JOB_a/b", false},
      {"JOB_{q}", false},
      {std::string("JOB_a\0b", 7), false},
      {"JOB_\xc3\xa9", false},
  };
  for (const IdCase& c : cases) EXPECT_EQ(valid_job_id(c.id), c.valid) << c.id;
}

TEST(JobId, NotJobNamespacedIsEmqKind) {
  try {
    check_job_id("TASK_1");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Kind);
    EXPECT_NE(std::string(e.what()).find("EMQKIND"), std::string::npos);
  }
  try {
    check_job_id("JOB_a b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
  }
}

TEST(JobId, TheWireGateChecksOnlyTheFirstThreeBytes) {
  for (const char* id : {"JOB", "JOBX1", "JOB_1", "JOB\n2", "JOB_a b"}) EXPECT_TRUE(passes_wire_gate(id)) << id;
  for (const char* id : {"", "JO", "TASK_1", "job_1"}) {
    EXPECT_FALSE(passes_wire_gate(id)) << id;
    try {
      check_wire_gate(id);
      ADD_FAILURE() << id;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Kind) << id;
    }
  }
  EXPECT_NO_THROW(check_wire_gate("JOBX1"));
  EXPECT_THROW(check_job_id("JOBX1"), Error) << "the host-side form stays for new ids";
}

TEST(JobId, MintedIdsHaveTheShape) {
  std::string id = mint_job_id();
  EXPECT_EQ(id.size(), 30u);
  EXPECT_EQ(id.substr(0, 4), "JOB_");
  EXPECT_TRUE(valid_job_id(id));
  for (char c : id.substr(4)) EXPECT_NE(std::string("ILOU").find(c), 0u) << "not Crockford: " << c;
}

TEST(JobId, MintOrderIsByteOrderWithinOneMillisecond) {
  const std::uint64_t ms = 1'800'000'000'000ULL;
  std::string prev = mint_job_id(ms);
  for (int i = 0; i < 100000; ++i) {
    std::string next = mint_job_id(ms);
    ASSERT_LT(prev, next) << "at mint " << i;
    prev = std::move(next);
  }
}

TEST(JobId, MintOrderIsByteOrderAcrossMilliseconds) {
  std::uint64_t ms = 1'900'000'000'000ULL;
  std::string prev = mint_job_id(ms);
  for (int i = 0; i < 100000; ++i) {
    if (i % 7 == 0) ++ms;
    std::string next = mint_job_id(ms);
    ASSERT_LT(prev, next) << "at mint " << i;
    prev = std::move(next);
  }
}

TEST(JobId, ClockSteppingBackStillIncreases) {
  std::string a = mint_job_id(2'000'000'000'000ULL);
  std::string b = mint_job_id(1'999'999'999'000ULL);
  EXPECT_LT(a, b);
}

TEST(JobId, MintedAtReadsTheTimeBack) {
  EXPECT_EQ(minted_at_ms(mint_job_id(2'100'000'000'123ULL)), 2'100'000'000'123ULL);
  EXPECT_EQ(minted_at_ms("JOB_custom"), std::nullopt);
  EXPECT_EQ(minted_at_ms("JOB_ZZZZZZZZZZZZZZZZZZZZZZZZZZ"), std::nullopt);
}

}  // namespace
}  // namespace echomq
