// The number readers (echomq/whole_number.h): each form takes the whole
// text or nothing; and no code of lib/, daemon/ or emq/ converts text to a
// number any other way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "echomq/whole_number.h"

namespace echomq {
namespace {

namespace fs = std::filesystem;

TEST(NumberReaders, ABoundedWholeNumberIsWithinItsRangeAndARangeFromZeroTakesNoSign) {
  EXPECT_EQ(whole_number_in("5", 1, 10), 5);
  EXPECT_EQ(whole_number_in("-5", -10, 10), -5);
  EXPECT_EQ(whole_number_in("0", 1, 10), std::nullopt);
  EXPECT_EQ(whole_number_in("11", 1, 10), std::nullopt);
  EXPECT_EQ(whole_number_in("-0", 0, 10), std::nullopt) << "-0 is no count";
  EXPECT_EQ(whole_number_in("+1", 0, 10), std::nullopt);
  EXPECT_EQ(whole_number_in("", 0, 10), std::nullopt);
}

TEST(NumberReaders, APortIsDigitsInItsRange) {
  EXPECT_EQ(port_number("6379"), 6379);
  EXPECT_EQ(port_number("65535"), 65535);
  EXPECT_EQ(port_number("65536"), std::nullopt);
  EXPECT_EQ(port_number("0"), std::nullopt);
  EXPECT_EQ(port_number("0", 0), 0);
  EXPECT_EQ(port_number("-1", 0), std::nullopt);
  EXPECT_EQ(port_number("80a"), std::nullopt);
  EXPECT_EQ(port_number(""), std::nullopt);
}

TEST(NumberReaders, AStreamEntryIdIsTwoNumbersInTheStreamsOrder) {
  const std::optional<StreamEntryId> a = stream_entry_id("1700000000000-2");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->ms, 1700000000000u);
  EXPECT_EQ(a->seq, 2u);
  EXPECT_TRUE(*stream_entry_id("5-10") > *stream_entry_id("5-9"));
  EXPECT_TRUE(*stream_entry_id("6-0") > *stream_entry_id("5-99"));
  EXPECT_EQ(stream_entry_id("18446744073709551615-18446744073709551615")->seq,
            std::numeric_limits<std::uint64_t>::max());
  for (const char* bad : {"", "5", "5-", "-5", "5--1", "5-x", "a-1", "18446744073709551616-0"}) {
    EXPECT_EQ(stream_entry_id(bad), std::nullopt) << bad;
  }
}

TEST(NumberReaders, ADecimalNumberIsFiniteAndTheWholeText) {
  EXPECT_EQ(decimal_number("1.5"), 1.5);
  EXPECT_EQ(decimal_number("-2"), -2.0);
  EXPECT_EQ(decimal_number("1e3"), 1000.0);
  EXPECT_EQ(decimal_number("1700000000000"), 1700000000000.0);
  for (const char* bad : {"", "inf", "-inf", "nan", "1e999", "0x10", "+1", " 1", "1 ", "1.5s"}) {
    EXPECT_EQ(decimal_number(bad), std::nullopt) << bad;
  }
}

TEST(NumberReaders, PastTheRangeIsToldFromNoNumber) {
  EXPECT_TRUE(past_whole_number("99999999999999999999"));
  EXPECT_TRUE(past_whole_number("-99999999999999999999"));
  EXPECT_FALSE(past_whole_number("12a"));
  EXPECT_FALSE(past_whole_number("5"));
  EXPECT_TRUE(past_decimal_number("1e999"));
  EXPECT_FALSE(past_decimal_number("1.2.3"));
}

// Issue 49 item 2: twelve hand-written readers and fourteen unchecked
// conversions, each with its own idea of a number. A new one fails here:
// call a reader of echomq/whole_number.h (or add a form there).
TEST(NumberReaders, NoCodeOutsideTheReadersConvertsTextToANumber) {
  static const std::regex conversion(
      R"(\b(stoi|stol|stoll|stoul|stoull|stof|stod|stold|atoi|atol|atoll|atof|strtol|strtoll|strtoul|strtoull|strtof|)"
      R"(strtod|strtold|sscanf|from_chars)\s*\(|\*\s*10\s*\+\s*\()");
  const fs::path root = EMQ_SOURCE_DIR;
  const fs::path readers = root / "lib" / "src" / "whole_number.cpp";
  std::size_t files = 0;
  for (const char* dir : {"lib", "daemon", "emq"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if ((ext != ".cpp" && ext != ".h") || entry.path() == readers) continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        EXPECT_FALSE(std::regex_search(line, conversion)) << entry.path().lexically_relative(root).string() << ":" << n
                                                          << " converts text to a number by hand: " << line
                                                          << "\n  use a reader of lib/include/echomq/whole_number.h";
      }
    }
  }
  EXPECT_GT(files, 100u) << "the sources were not found under " << root;
}

}  // namespace
}  // namespace echomq
