#include "handlers/plugin_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace echomq::daemon {
namespace {

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

std::string open_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::string("cannot load plugin ") + path + ": " + std::strerror(errno) +
           "; build the plugin or fix handler.path";
  }
  if (!S_ISREG(st.st_mode)) return "cannot load plugin " + path + ": not a regular file; fix handler.path";
  return {};
}

// dlsym's object pointer as the function pointer it is (POSIX guarantees
// the conversion works; memcpy keeps -Wpedantic quiet about it).
template <typename Fn>
Fn symbol(void* dl, const char* name) {
  void* p = ::dlsym(dl, name);
  Fn fn = nullptr;
  static_assert(sizeof fn == sizeof p, "function and object pointers differ in size");
  std::memcpy(&fn, &p, sizeof fn);
  return fn;
}

}  // namespace

PluginLibrary::PluginLibrary(const std::string& path) : path_(path) {
  if (std::string problem = open_problem(path); !problem.empty()) throw std::runtime_error(problem);
  // RTLD_NOW: an unresolved symbol fails here, at start, not in the middle
  // of a job. RTLD_LOCAL: two plugins defining the same helper names do
  // not bind to each other's.
  handle_dl_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_dl_ == nullptr) {
    throw std::runtime_error("cannot load plugin " + path + ": " + dl_error() +
                             "; it must be a shared library built for this system, with every library it needs "
                             "installed");
  }
  // The ABI number before any other symbol: the rest of the table means
  // nothing until it matches.
  const auto version = symbol<emq_plugin_abi_version_fn>(handle_dl_, "emq_plugin_abi_version");
  if (version == nullptr) {
    close();
    throw std::runtime_error("plugin " + path +
                             " is not an emqd plugin: it does not export emq_plugin_abi_version (see "
                             "echomq/plugin.h; build with EMQ_PLUGIN_EXPORT on the four functions)");
  }
  const int abi = version();
  if (abi != EMQ_PLUGIN_ABI_VERSION) {
    close();
    throw std::runtime_error("plugin " + path + " was built for plugin ABI " + std::to_string(abi) +
                             ", but this emqd speaks ABI " + std::to_string(EMQ_PLUGIN_ABI_VERSION) +
                             "; rebuild it against this emqd's echomq/plugin.h");
  }
  create_ = symbol<emq_plugin_create_fn>(handle_dl_, "emq_plugin_create");
  handle_ = symbol<emq_plugin_handle_fn>(handle_dl_, "emq_plugin_handle");
  destroy_ = symbol<emq_plugin_destroy_fn>(handle_dl_, "emq_plugin_destroy");
  handle_parent_ = symbol<emq_plugin_handle_parent_fn>(handle_dl_, "emq_plugin_handle_parent");
  host_ = symbol<emq_plugin_host_fn>(handle_dl_, "emq_plugin_host");
  const auto require = [&](bool present, const char* name) {
    if (present) return;
    close();
    throw std::runtime_error("plugin " + path + " does not export " + name +
                             ", which plugin ABI 1 requires (see echomq/plugin.h; mark it EMQ_PLUGIN_EXPORT)");
  };
  require(create_ != nullptr, "emq_plugin_create");
  require(handle_ != nullptr, "emq_plugin_handle");
  require(destroy_ != nullptr, "emq_plugin_destroy");
}

PluginLibrary::PluginLibrary(PluginLibrary&& other) noexcept
    : path_(std::move(other.path_)),
      handle_dl_(std::exchange(other.handle_dl_, nullptr)),
      create_(std::exchange(other.create_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)),
      destroy_(std::exchange(other.destroy_, nullptr)),
      handle_parent_(std::exchange(other.handle_parent_, nullptr)),
      host_(std::exchange(other.host_, nullptr)) {}

PluginLibrary& PluginLibrary::operator=(PluginLibrary&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    handle_dl_ = std::exchange(other.handle_dl_, nullptr);
    create_ = std::exchange(other.create_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    destroy_ = std::exchange(other.destroy_, nullptr);
    handle_parent_ = std::exchange(other.handle_parent_, nullptr);
    host_ = std::exchange(other.host_, nullptr);
  }
  return *this;
}

PluginLibrary::~PluginLibrary() { close(); }

void PluginLibrary::close() noexcept {
  if (handle_dl_ != nullptr) ::dlclose(handle_dl_);
  handle_dl_ = nullptr;
  create_ = nullptr;
  handle_ = nullptr;
  destroy_ = nullptr;
  handle_parent_ = nullptr;
  host_ = nullptr;
}

std::string plugin_library_problem(const std::string& path) {
  try {
    PluginLibrary library(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::vector<std::string> plugin_library_problems(const Config& config) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < config.queues.size(); ++i) {
    const QueueConfig& q = config.queues[i];
    if (q.handler.type != HandlerConfig::Type::Plugin) continue;
    std::string problem = plugin_library_problem(q.handler.path);
    if (problem.empty()) continue;
    problems.push_back(config.path + ": queues[" + std::to_string(i) + "].handler.path: queue " + q.name + ": " +
                       problem);
  }
  return problems;
}

}  // namespace echomq::daemon
