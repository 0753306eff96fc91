// The one reader of a decimal integer that must be the whole text: an
// optional '-', then digits, nothing else (no '+', no space, no unit), and
// within int64. Used for numbers read from the server (counters, scores,
// slots) and typed by a user (pages, counts); each caller checks its own
// range and says what it wanted.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace echomq {

std::optional<std::int64_t> whole_number(std::string_view text);

}  // namespace echomq
