#include "config/config.h"

#include <algorithm>
#include <cctype>

#include "config/config_document.h"
#include "config/config_paths.h"
#include "config/config_reader.h"
#include "config/config_schedules.h"
#include "config/config_schema.h"
#include "config/config_sections.h"
#include "text/listen_address.h"

namespace echomq::daemon {

namespace {

// "" when `listen` is "" or host:port, else what is wrong with it.
std::string listen_problem(const std::string& listen) {
  std::string why;
  return listen.empty() || parse_listen_address(listen, 1, why) ? "" : "but " + why;
}

void read_metrics(ConfigReader& r, const Field& field, MetricsConfig& metrics) {
  Mapping m;
  if (!read_mapping(r, field, kTop, "metrics", m)) return;
  if (auto f = m.get("listen"); f && r.string(*f, metrics.listen)) {
    std::string why = listen_problem(metrics.listen);
    if (!why.empty()) r.error(*f, "expected host:port (127.0.0.1:9464, [::1]:9464) or \"\" for off, " + why);
  }
}

// The daemon's name becomes the host part of its id, taken as it is.
void read_daemon(ConfigReader& r, const Field& field, Config& config) {
  Mapping m;
  if (!read_mapping(r, field, kTop, "daemon", m)) return;
  read_plain(r, m, kTop, "daemon", &config, nullptr);
  const Field* name = m.get("name");
  const std::string& n = config.daemon.name;
  const bool bad = n.size() > 64 || std::any_of(n.begin(), n.end(), [](char c) {
                     return !std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-';
                   });
  if (name != nullptr && bad) {
    r.error(*name,
            "expected at most 64 bytes of [A-Za-z0-9_.-] (it is the host part of the daemon's id), or \"\" "
            "for the host name");
  }
}

// The document: each section by its reader, the plain ones (log, reaper,
// shutdown) by their rows alone.
void load(ConfigReader& r, const std::string& dir, const YAML::Node& root, Config& config) {
  Mapping top;
  if (!read_mapping(r, Field{"", root, 0}, kTop, "", top)) return;
  if (auto f = top.get("valkey")) read_valkey(r, dir, *f, config);
  if (auto f = top.get("metrics")) read_metrics(r, *f, config.metrics);
  if (auto f = top.get("daemon")) read_daemon(r, *f, config);
  if (auto f = top.get("tracing")) read_tracing(r, dir, *f, config);
  read_plain(r, top, kTop, "", &config, nullptr);
  QueueConfig defaults;
  if (auto f = top.get("defaults")) read_defaults(r, *f, defaults);
  read_queues(r, dir, top, defaults, config.queues);
  if (auto f = top.get("schedules")) read_schedules(r, *f, keys_at(kSchedule, ""), config.schedules);
  if (config.valkey.embedded && config.valkey.embedded_dir.empty()) {
    config.valkey.embedded_dir = default_embedded_dir(dir);
  }
}

}  // namespace

bool read_mapping(ConfigReader& r, const Field& f, unsigned place, const std::string& section, Mapping& out) {
  const std::vector<std::string> allowed = keys_at(place, section);
  Misplaced misplaced;
  for (const KeySpec& k : config_schema()) {
    const std::string name = k.leaf();
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::string advice = misplaced_advice(place, section, name);
    if (!advice.empty()) misplaced.emplace_back(name, std::move(advice));
  }
  return r.mapping(f, allowed, out, misplaced);
}

void read_plain(ConfigReader& r, const Mapping& m, unsigned place, const std::string& section, Config* config,
                QueueConfig* queue) {
  for (const KeySpec& k : config_schema()) {
    if ((k.places & place) == 0 || k.parent() != section) continue;
    const Field* f = m.get(k.leaf());
    if (f == nullptr) continue;
    if (k.type == ValueType::Mapping) {
      Mapping sub;
      if (read_mapping(r, *f, place, k.path, sub)) read_plain(r, sub, place, k.path, config, queue);
      continue;
    }
    if (k.slot == nullptr) continue;  // its section's reader reads it
    const Slot s = k.slot(config, queue);
    switch (k.type) {
      case ValueType::Integer:
        if (s.i64 != nullptr) {
          r.integer(*f, static_cast<std::int64_t>(k.lo), static_cast<std::int64_t>(k.hi), *s.i64, k.why);
        } else {
          r.integer(*f, static_cast<int>(k.lo), static_cast<int>(k.hi), *s.i32, k.why);
        }
        break;
      case ValueType::Number: r.number(*f, k.lo, k.hi, *s.number, k.why); break;
      case ValueType::Boolean: r.boolean(*f, *s.boolean); break;
      case ValueType::Word: r.word(*f, k.words, *s.text); break;
      case ValueType::String: r.string(*f, *s.text); break;
      default: break;
    }
  }
}

ConfigError::ConfigError(std::vector<std::string> errors)
    : std::runtime_error([&] {
        std::string text;
        for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e;
        return text;
      }()),
      errors_(std::move(errors)) {}

Config load_config(const std::string& path) {
  ConfigReader reader(path);
  Config config;
  config.path = path;
  YAML::Node root;
  if (read_document(reader, path, root)) load(reader, directory_of(path), root, config);
  if (reader.failed()) throw ConfigError(reader.errors());
  return config;
}

}  // namespace echomq::daemon
