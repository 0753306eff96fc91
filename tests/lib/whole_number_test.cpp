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
