#include "schedule/cron_marker.h"

#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {
constexpr std::int64_t kMaxFireMs = 1000000000000000;  // enqueue_cron's ARGV[4] bound
constexpr std::size_t kExcerptBytes = 80;
}  // namespace

std::optional<CronMarker> parse_cron_marker(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon + 1 == text.size()) return std::nullopt;
  const std::optional<std::int64_t> ms = whole_number_in(text.substr(0, colon), 0, kMaxFireMs);
  if (!ms) return std::nullopt;
  return CronMarker{*ms, std::string(text.substr(colon + 1)), std::string(text)};
}

std::string marker_excerpt(std::string_view text) {
  if (text.size() <= kExcerptBytes) return std::string(text);
  return std::string(text.substr(0, kExcerptBytes)) + "...";
}

}  // namespace echomq::daemon
