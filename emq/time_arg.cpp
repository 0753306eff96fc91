#include "time_arg.h"

#include <algorithm>
#include <ctime>
#include <string>

#include "echomq/whole_number.h"

namespace echomq::cli {

namespace {

// Reads exactly n digits (n <= 4) at text[pos], advancing pos.
std::optional<int> digits(std::string_view text, std::size_t& pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  const std::optional<std::int64_t> v = whole_number_in(text.substr(pos, n), 0, 9999);
  if (!v) return std::nullopt;
  pos += n;
  return static_cast<int>(*v);
}

bool expect(std::string_view text, std::size_t& pos, std::string_view any_of) {
  if (pos >= text.size() || any_of.find(text[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

std::optional<std::int64_t> epoch_ms(std::string_view text) {
  return whole_number_in(text, 0, 999999999999999);  // up to the year 33658
}

std::optional<std::int64_t> rfc3339_ms(std::string_view t) {
  std::size_t p = 0;
  auto year = digits(t, p, 4);
  if (!year || !expect(t, p, "-")) return std::nullopt;
  auto month = digits(t, p, 2);
  if (!month || !expect(t, p, "-")) return std::nullopt;
  auto day = digits(t, p, 2);
  if (!day || !expect(t, p, "Tt ")) return std::nullopt;
  auto hour = digits(t, p, 2);
  if (!hour || !expect(t, p, ":")) return std::nullopt;
  auto minute = digits(t, p, 2);
  if (!minute || !expect(t, p, ":")) return std::nullopt;
  auto second = digits(t, p, 2);
  if (!second) return std::nullopt;
  int ms = 0;
  if (p < t.size() && t[p] == '.') {
    ++p;
    const std::size_t start = p;
    while (p < t.size() && t[p] >= '0' && t[p] <= '9') ++p;
    if (p == start) return std::nullopt;
    // Milliseconds: the first three digits, padded ("5" is 500); the rest cut.
    std::string first3(t.substr(start, std::min<std::size_t>(p - start, 3)));
    first3.resize(3, '0');
    ms = static_cast<int>(whole_number_in(first3, 0, 999).value_or(0));
  }
  int offset_min = 0;
  if (expect(t, p, "Zz")) {
    // UTC
  } else if (p < t.size() && (t[p] == '+' || t[p] == '-')) {
    const int sign = t[p] == '-' ? -1 : 1;
    ++p;
    auto oh = digits(t, p, 2);
    if (!oh || !expect(t, p, ":")) return std::nullopt;
    auto om = digits(t, p, 2);
    if (!om || *oh > 23 || *om > 59) return std::nullopt;
    offset_min = sign * (*oh * 60 + *om);
  } else {
    return std::nullopt;  // a time without a zone means nothing to a server elsewhere
  }
  if (p != t.size()) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (*year % 4 == 0 && *year % 100 != 0) || *year % 400 == 0;
  if (*day > kDays[*month - 1] || (*month == 2 && *day == 29 && !leap)) return std::nullopt;

  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second == 60 ? 59 : *second;  // a leap second is its minute's last
  const std::int64_t secs = static_cast<std::int64_t>(::timegm(&tm)) - std::int64_t{offset_min} * 60;
  if (secs < 0) return std::nullopt;
  return secs * 1000 + ms;
}

}  // namespace

std::optional<std::int64_t> parse_time_ms(std::string_view text) {
  if (auto ms = epoch_ms(text)) return ms;
  return rfc3339_ms(text);
}

}  // namespace echomq::cli
