// A daemon of the fleet registry as tools show it: the object of
// `emq daemons --json` and of the page's /api/daemons, one shape for both;
// and which queues the live daemons serve.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "echomq/daemons.h"

namespace echomq::cli {

nlohmann::ordered_json daemon_json(const DaemonInfo& d, std::int64_t now_ms, bool with_jobs);

// How many live daemons list the queue among theirs.
std::int64_t served_by(const Fleet& fleet, const std::string& queue);

}  // namespace echomq::cli
