// A pause as tools show it (`emq pause`, `emq stats`, `emq web`): who, why,
// and when it ends, by the server's clock. One wording, so the CLI and the
// page never disagree.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "echomq/stats.h"

namespace echomq::cli {

// "by ann@build-1 (deploy of v2) until 2026-05-01T12:00:00.000Z"; an end
// that has come says it lifts at the next claim; a broken one says how to
// mend it. "" when the queue is not paused.
std::string describe_pause(const QueueStats& s, std::int64_t now_ms);

// null when not paused, else {"by", "reason", "until_ms", "ended",
// "broken_until"} (absent ones null): `emq stats --json` and the API.
nlohmann::ordered_json pause_json(const QueueStats& s, std::int64_t now_ms);

}  // namespace echomq::cli
