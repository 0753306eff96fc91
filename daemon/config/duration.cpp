#include "config/duration.h"

#include <charconv>
#include <map>

namespace echomq::daemon {

std::optional<std::int64_t> parse_duration_ms(const std::string& text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || value < 0) return std::nullopt;
  std::string unit(end, text.data() + text.size());
  static const std::map<std::string, std::int64_t> kUnits = {
      {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end() || value > std::int64_t{1} << 40) return std::nullopt;
  return value * it->second;
}

}  // namespace echomq::daemon
