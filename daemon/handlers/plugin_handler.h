// The `plugin` kind: a shared library with the C ABI of echomq/plugin.h,
// called in-process. start() loads and checks it and creates its state
// from the queue's config JSON; run() calls handle() (from up to
// `concurrency` threads at once); shutdown() destroys the state. A plugin
// that throws, returns an unknown code or writes a bad result fails that
// job, never the daemon. A plugin cannot be interrupted: when the stop
// token fires, the call runs on to its end and its answer is discarded.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/config_types.h"
#include "handlers/handler.h"
#include "handlers/plugin_library.h"

namespace echomq::daemon {

class PluginHandler : public Handler {
 public:
  // The error text a plugin may write is cut here, as a stderr tail is.
  static constexpr std::size_t kMaxErrorBytes = 4096;

  struct Params {
    std::string queue;
    HandlerConfig handler;  // path, plugin_config_json, max_output_bytes
  };

  explicit PluginHandler(Params params);
  ~PluginHandler() override;

  // Throws std::runtime_error: the library is unusable, or its create()
  // failed (with the plugin's own message).
  void start() override;
  Outcome run(const Job& job, const StopToken& stop) override;
  // Destroys the plugin's state; the library is closed with the handler.
  void shutdown() override;

 private:
  Params params_;
  std::optional<PluginLibrary> library_;
  void* state_ = nullptr;
};

std::unique_ptr<Handler> make_plugin_handler(const QueueConfig& queue);

}  // namespace echomq::daemon
