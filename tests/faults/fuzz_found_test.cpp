// Inputs the fuzzers of fuzz/ found crashing something, kept as files in
// tests/faults/fuzz_found/ (named for what they found) and replayed here
// against the function they broke, now fixed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "handlers/pool_protocol.h"

namespace echomq::test {
namespace {

std::string found(const std::string& name) {
  std::ifstream in(std::string(EMQ_SOURCE_DIR) + "/tests/faults/fuzz_found/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// pool_frame_fuzz: "3e333…" made nlohmann::json throw out_of_range (a
// number past a double), which parse_reply_frame let escape: it promises a
// refusal with a reason, never a throw.
TEST(FuzzFound, PoolReplyNumberOverflowIsARefusalNotAThrow) {
  const std::string line = found("pool_reply_number_overflow.txt");
  ASSERT_FALSE(line.empty());
  daemon::Reply reply;
  std::string problem;
  EXPECT_NO_THROW(problem = daemon::parse_reply_frame(line, reply));
  EXPECT_NE(problem.find("not JSON"), std::string::npos) << problem;
  EXPECT_NE(problem.find("3e333"), std::string::npos) << "the reason names the number: " << problem;

  // The same number inside an otherwise good reply.
  EXPECT_NO_THROW(problem = daemon::parse_reply_frame(R"({"id":"JOB_1","ok":true,"n":3e333})", reply));
  EXPECT_NE(problem.find("not JSON"), std::string::npos) << problem;
}

}  // namespace
}  // namespace echomq::test
