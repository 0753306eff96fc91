// A duration as a person writes one in a config or on a command line: a
// whole number and a unit, "500ms", "30s", "5m", "1h", "2d". The config's
// schedules and limits and `emq limit --rate` read it here, each with its
// own range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace echomq::daemon {

// The duration in ms; nullopt for anything else (no unit, a sign, a
// fraction, more than 2^40 of the unit).
std::optional<std::int64_t> parse_duration_ms(const std::string& text);

}  // namespace echomq::daemon
