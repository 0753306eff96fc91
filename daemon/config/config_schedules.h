// The top-level `schedules:` list (DESIGN.md): each entry's keys, its cron
// expression and time zone checked here, so --check-config names a bad one
// by file, line and key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config_reader.h"
#include "config/config_types.h"

namespace echomq::daemon {

void read_schedules(ConfigReader& r, const Field& list, const std::vector<std::string>& keys,
                    std::vector<ScheduleConfig>& out);

}  // namespace echomq::daemon
