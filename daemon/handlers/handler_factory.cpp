#include "handlers/handler_factory.h"

#include <stdexcept>
#include <utility>

#include "handlers/exec_handler.h"
#include "handlers/plugin_handler.h"
#include "handlers/pool_handler.h"

namespace echomq::daemon {

std::unique_ptr<Handler> make_handler(const QueueConfig& queue, const std::vector<std::string>& secret_env,
                                      std::function<void()> on_restart) {
  switch (queue.handler.type) {
    case HandlerConfig::Type::Exec: return make_exec_handler(queue, secret_env);
    case HandlerConfig::Type::Pool: return make_pool_handler(queue, secret_env, std::move(on_restart));
    case HandlerConfig::Type::Plugin: return make_plugin_handler(queue);
  }
  throw std::runtime_error("queue " + queue.name + ": this build of emqd has no such handler type");
}

}  // namespace echomq::daemon
