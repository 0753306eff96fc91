// Logging setup: spdlog to stderr (journald and container runtimes collect
// it), as text or as one JSON object per line.
#pragma once

#include <string>

namespace echomq::daemon {

// level: trace debug info warn error critical off; format: text | json.
// Throws std::invalid_argument for anything else.
void setup_logging(const std::string& level, const std::string& format);

}  // namespace echomq::daemon
