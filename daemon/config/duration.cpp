#include "config/duration.h"

#include <charconv>
#include <limits>
#include <map>

namespace echomq::daemon {

std::optional<std::int64_t> parse_duration_ms(const std::string& text) {
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool too_many_digits = ec == std::errc::result_out_of_range;
  if ((ec != std::errc() && !too_many_digits) || end == text.data() || text[0] == '-') return std::nullopt;
  std::string unit(end, text.data() + text.size());
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
