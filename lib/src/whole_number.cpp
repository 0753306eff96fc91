#include "echomq/whole_number.h"

#include <charconv>
#include <cmath>

namespace echomq {

namespace {
// from_chars over the whole text: it says when a number is past the type
// rather than clamping it, and reads no '+' or space.
template <typename T>
std::optional<T> whole_text(std::string_view text) {
  T n{};
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || at != end) return std::nullopt;
  return n;
}

template <typename T>
bool past_range(std::string_view text) {
  T n{};
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, n);
  return ec == std::errc::result_out_of_range && at == end;
}
}  // namespace

std::optional<std::int64_t> whole_number(std::string_view text) { return whole_text<std::int64_t>(text); }

std::optional<std::int64_t> whole_number_in(std::string_view text, std::int64_t lo, std::int64_t hi) {
  if (lo >= 0 && !text.empty() && text.front() == '-') return std::nullopt;
  const std::optional<std::int64_t> n = whole_number(text);
  if (!n || *n < lo || *n > hi) return std::nullopt;
  return n;
}

std::optional<std::int64_t> server_integer_in(std::string_view text, std::int64_t lo, std::int64_t hi) {
  const std::size_t sign = !text.empty() && text.front() == '-' ? 1 : 0;
  if (text.size() > 18 || text.size() == sign) return std::nullopt;
  if (text[sign] == '0' && (sign == 1 || text.size() > 1)) return std::nullopt;
  const std::optional<std::int64_t> n = whole_number(text);
  if (!n || *n < lo || *n > hi) return std::nullopt;
  return n;
}

std::optional<int> port_number(std::string_view text, int lowest) {
  const std::optional<std::int64_t> n = whole_number_in(text, lowest, 65535);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<StreamEntryId> stream_entry_id(std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const std::optional<std::uint64_t> ms = whole_text<std::uint64_t>(text.substr(0, dash));
  const std::optional<std::uint64_t> seq = whole_text<std::uint64_t>(text.substr(dash + 1));
  if (!ms || !seq) return std::nullopt;
  return StreamEntryId{*ms, *seq};
}

std::optional<double> decimal_number(std::string_view text) {
  // from_chars reads "inf", "nan" and, with a '-', "-inf": none is a number here.
  const std::optional<double> v = whole_text<double>(text);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

bool past_whole_number(std::string_view text) { return past_range<std::int64_t>(text); }

bool past_decimal_number(std::string_view text) { return past_range<double>(text); }

}  // namespace echomq
