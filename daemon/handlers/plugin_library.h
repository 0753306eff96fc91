// One plugin shared library, loaded and checked: dlopen(RTLD_NOW |
// RTLD_LOCAL), the ABI number first, then the other three functions of
// echomq/plugin.h. dlclose in the destructor. Also the check-time probe
// behind `emqd --check-config`.
#pragma once

#include <string>
#include <vector>

#include "config/config_types.h"
#include "echomq/plugin.h"

namespace echomq::daemon {

class PluginLibrary {
 public:
  // Throws std::runtime_error saying what is wrong with the library at
  // `path` (missing, not a shared library, unresolved symbols, not an emqd
  // plugin, another ABI number, a missing function) and what to do.
  explicit PluginLibrary(const std::string& path);
  PluginLibrary(PluginLibrary&& other) noexcept;
  PluginLibrary& operator=(PluginLibrary&& other) noexcept;
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;
  ~PluginLibrary();

  const std::string& path() const noexcept { return path_; }
  emq_plugin_create_fn create() const noexcept { return create_; }
  emq_plugin_handle_fn handle() const noexcept { return handle_; }
  emq_plugin_destroy_fn destroy() const noexcept { return destroy_; }
  // The optional flows entry point; nullptr when the plugin lacks it.
  emq_plugin_handle_parent_fn handle_parent() const noexcept { return handle_parent_; }
  // The optional progress entry point; nullptr when the plugin lacks it.
  emq_plugin_host_fn host() const noexcept { return host_; }

 private:
  void close() noexcept;

  std::string path_;
  void* handle_dl_ = nullptr;
  emq_plugin_create_fn create_ = nullptr;
  emq_plugin_handle_fn handle_ = nullptr;
  emq_plugin_destroy_fn destroy_ = nullptr;
  emq_plugin_handle_parent_fn handle_parent_ = nullptr;
  emq_plugin_host_fn host_ = nullptr;
};

// Why the library at `path` cannot be used as a plugin, or "" when it can:
// loads it, checks the ABI number and the functions, and unloads it. The
// plugin's code runs no further than its ABI number (and its static
// initialisers, which dlopen cannot skip).
std::string plugin_library_problem(const std::string& path);

// Each `type: plugin` queue of `config` whose library is unusable, as
// "FILE: queues[N].handler.path: queue NAME: PROBLEM". For main(), before
// anything starts, so `emqd --check-config` and a starting daemon both
// refuse a bad plugin with exit 2.
std::vector<std::string> plugin_library_problems(const Config& config);

}  // namespace echomq::daemon
