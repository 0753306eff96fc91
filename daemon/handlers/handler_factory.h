// Builds the handler a queue's `handler.type` names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config_types.h"
#include "handlers/handler.h"

namespace echomq::daemon {

// secret_env: names of variables handlers must never see (the Valkey
// password's), even with inherit_env: true.
std::unique_ptr<Handler> make_handler(const QueueConfig& queue, const std::vector<std::string>& secret_env);

}  // namespace echomq::daemon
