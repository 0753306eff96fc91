#include "text/duration.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>

#include "echomq/whole_number.h"

namespace echomq::daemon {

std::optional<std::int64_t> parse_duration_ms(const std::string& text) {
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  // Digits, then the unit.
  const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  const std::string_view number = std::string_view(text).substr(0, digits);
  const bool too_many_digits = past_whole_number(number);
  const std::optional<std::int64_t> read = whole_number_in(number, 0, kMost);
  if (!read && !too_many_digits) return std::nullopt;
  const std::int64_t value = read.value_or(kMost);
  const std::string unit = text.substr(digits);
  static const std::map<std::string, std::int64_t> kUnits = {
      {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return std::nullopt;
  // Saturated rather than wrapped (640511947004d wrapped to 4.7 h): every
  // caller's range then refuses it in its own words.
  if (too_many_digits || value > kMost / it->second) return kMost;
  return value * it->second;
}

}  // namespace echomq::daemon
