// A schedule's marker in emq:{q}:cron (PROTOCOL.md): "<fire_ms>:<job id>"
// of its last fire, read as enqueue_cron reads it, so the daemon, `emq
// schedules` and the script agree on what is broken and what is held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace echomq::daemon {

struct CronMarker {
  std::int64_t fire_ms = 0;
  std::string job;
  std::string text;  // as written
};

// Digits (at most 10^15, enqueue_cron's bound), a colon, at least one byte
// of id; nullopt for anything else, which enqueue_cron refuses (EMQROW).
std::optional<CronMarker> parse_cron_marker(std::string_view text);

// A marker more than this ahead of the server's clock holds its schedule
// (enqueue_cron never moves a marker back, so no tick fires before it): the
// clock stepped back, or someone wrote the marker. Less is a fire racing
// a read of the clock, which the next round sees behind it.
inline constexpr std::int64_t kMarkerAheadMs = 1000;

// The marker's text for a log line or a message: at most 80 bytes.
std::string marker_excerpt(std::string_view text);

}  // namespace echomq::daemon
