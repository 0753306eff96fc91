// whole_number: the whole text is the number, or there is none.
#include "echomq/whole_number.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace echomq {
namespace {

TEST(WholeNumber, ReadsDigitsWithAnOptionalMinusAcrossInt64) {
  EXPECT_EQ(whole_number("0"), 0);
  EXPECT_EQ(whole_number("-17"), -17);
  EXPECT_EQ(whole_number("007"), 7);  // callers that want the wire's form check it (limits.cpp)
  EXPECT_EQ(whole_number("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(whole_number("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
}

// The form claim reads a limit or a policy field in: what it refuses, every
// reader of those fields refuses.
TEST(WholeNumber, ServerIntegerFormIsTheScriptsOwn) {
  EXPECT_EQ(server_integer_in("0", 0, 10), 0);
  EXPECT_EQ(server_integer_in("7", 1, 10), 7);
  EXPECT_EQ(server_integer_in("-7", -10, 10), -7);
  EXPECT_EQ(server_integer_in("999999999999999999", 0, INT64_MAX), 999999999999999999);
  for (const char* bad : {"", "-", "-0", "05", "-05", "+5", " 5", "5 ", "1e3", "1000000000000000000"}) {
    EXPECT_EQ(server_integer_in(bad, -2000000000000000000, INT64_MAX), std::nullopt) << "'" << bad << "'";
  }
  EXPECT_EQ(server_integer_in("11", 1, 10), std::nullopt);
  EXPECT_EQ(server_integer_in("0", 1, 10), std::nullopt);
}

TEST(WholeNumber, RefusesAnythingButTheNumberAlone) {
  const std::vector<std::string> texts = {"",
                                          "-",
                                          "+1",
                                          " 1",
                                          "1 ",
                                          "1.0",
                                          "1e3",
                                          "0x10",
                                          "12a",
                                          "9223372036854775808",
                                          "-9223372036854775809",
                                          std::string(200000, '9'),
                                          std::string("1\0", 2)};
  for (const std::string& text : texts) {
    EXPECT_EQ(whole_number(text), std::nullopt) << "'" << text.substr(0, 40) << "'";
  }
}

}  // namespace
}  // namespace echomq
