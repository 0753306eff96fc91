#include "echomq/whole_number.h"

#include <charconv>

namespace echomq {

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || at != end) return std::nullopt;
  return n;
}

}  // namespace echomq
