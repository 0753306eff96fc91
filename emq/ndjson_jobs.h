// Jobs to enqueue, one JSON object per line (emq enqueue --ndjson): read
// and checked whole before anything is sent, so a bad line enqueues
// nothing at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/transitions.h"

namespace echomq::cli {

// Ten years: far enough for any real schedule, and far from overflowing
// server time + delay.
inline constexpr std::int64_t kMaxDelayMs = 10LL * 365 * 24 * 3600 * 1000;

struct NdjsonJob {
  std::size_t line = 0;
  std::string id;  // given, or minted in line order
  std::string payload;
  int lane = 0;
  std::optional<std::int64_t> delay_ms;  // from the server's now
  std::optional<std::int64_t> at_ms;     // epoch ms
  JobOptions job{};                      // unique, unique_mode, unique_for_ms
  std::string group;                     // "" for none
};

struct NdjsonError {
  std::size_t line = 0;
  std::string message;
};

struct NdjsonInput {
  std::vector<NdjsonJob> jobs;
  std::vector<NdjsonError> errors;  // every bad line, in order
};

// Each line: {"payload": …} or {"payload_b64": "…"}, and optionally "id",
// "lane", "delay_ms", "at" (RFC 3339 or epoch ms; not with delay_ms),
// "unique", "unique_mode", "unique_for_ms", "group".
// A payload that is a JSON string is its UTF-8 bytes; any other JSON value
// is that value written compactly. Blank lines are skipped; any other key
// is an error (a typo must not pass unseen).
NdjsonInput parse_ndjson(std::string_view text);

}  // namespace echomq::cli
