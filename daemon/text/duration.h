// A duration as a person writes one in a config or on a command line: a
// whole number and a unit, "500ms", "30s", "5m", "1h", "2d". The config's
// schedules and limits and `emq limit --rate` read it here, each with its
// own range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace echomq::daemon {

// The duration in ms; INT64_MAX for one too long to count in ms, so that
// every range refuses it; nullopt for anything else (no unit, a sign, a
// fraction).
std::optional<std::int64_t> parse_duration_ms(const std::string& text);

}  // namespace echomq::daemon
