// A point in time as an operator writes it: RFC 3339 or epoch milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace echomq::cli {

// "2026-12-03T10:00:00Z", "2026-12-03T11:00:00.250+01:00" (RFC 3339: a
// zone is required, fractions past milliseconds are dropped) or
// "1796219941283" (epoch ms). nullopt for anything else, or before 1970.
std::optional<std::int64_t> parse_time_ms(std::string_view text);

}  // namespace echomq::cli
