// Builds the handler a queue's `handler.type` names.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "handlers/handler.h"

namespace echomq::daemon {

// secret_env: names of variables handlers must never see (the Valkey
// password's), even with inherit_env: true. on_restart: called each time a
// pool starts a process to replace another (emq_handler_restarts_total);
// the other kinds never call it.
std::unique_ptr<Handler> make_handler(const QueueConfig& queue, const std::vector<std::string>& secret_env,
                                      std::function<void()> on_restart = {});

}  // namespace echomq::daemon
