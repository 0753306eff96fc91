// When bytes may travel as a JSON string, and base64 for when they may not:
// the rule the pool handler's frames and emq's --json output share.
#include "echomq/bytes.h"

#include <gtest/gtest.h>

#include <string>

namespace echomq {
namespace {

std::string every_byte() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  return bytes;
}

TEST(Utf8, AcceptsWellFormedRejectsTheRest) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain ascii"));
  EXPECT_TRUE(is_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_TRUE(is_utf8(std::string("\0", 1)));
  EXPECT_FALSE(is_utf8("\xff"));
  EXPECT_FALSE(is_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_utf8("\xe0\x80\xaf"));      // overlong, 3 bytes
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_utf8("\xe2\x82"));          // cut short
  EXPECT_FALSE(is_utf8("\x80"));              // a lone continuation byte
}

TEST(Base64, RoundTripsEveryLengthAndRejectsBadText) {
  const std::string bytes = every_byte();
  for (std::size_t n = 0; n <= 10; ++n) {
    std::string back;
    ASSERT_TRUE(base64_decode(base64_encode(bytes.substr(250 - n, n)), back)) << n;
    EXPECT_EQ(back, bytes.substr(250 - n, n));
  }
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  std::string out;
  EXPECT_FALSE(base64_decode("Zm8", out));   // no padding
  EXPECT_FALSE(base64_decode("Zm=v", out));  // padding inside
  EXPECT_FALSE(base64_decode("Zm9v YmFy", out));
  EXPECT_FALSE(base64_decode("Zm9-", out));  // the URL alphabet
}

}  // namespace
}  // namespace echomq
