// The readers of each part of a configuration, for load_config (config.cpp):
//   config_valkey.cpp       the valkey block: url, TLS, password, embedded
//   config_queues.cpp       defaults, queues and their handlers
//   config_plugin_json.cpp  a plugin's config mapping, as JSON text
//   config_tracing.cpp      the tracing block and the OTEL_* variables
// Every key they accept is a row of config_schema.cpp; the plain ones
// (numbers, booleans, words) are read from their row by read_plain.
#pragma once

#include <string>
#include <vector>

#include "config/config_reader.h"
#include "config/config_schema.h"
#include "config/config_types.h"

namespace echomq::daemon {

// The mapping at `section` (a row's path; "" for the place's own mapping) of
// `place`: its keys checked against the schema, with its advice for a
// misplaced one. False, having reported it, when it is not a mapping.
bool read_mapping(ConfigReader& r, const Field& f, unsigned place, const std::string& section, Mapping& out);

// Reads each plain key of `m` (the mapping at `section` of `place`) into the
// field its row names, and each plain mapping below it, key by key.
void read_plain(ConfigReader& r, const Mapping& m, unsigned place, const std::string& section, Config* config,
                QueueConfig* queue);

// `dir` is the configuration file's directory: relative paths start there.
void read_valkey(ConfigReader& r, const std::string& dir, const Field& field, Config& config);
std::string default_embedded_dir(const std::string& dir);

// The tracing block, and the OTEL_* variables that fill what it leaves out.
void read_tracing(ConfigReader& r, const std::string& dir, const Field& field, Config& config);

void read_defaults(ConfigReader& r, const Field& field, QueueConfig& defaults);
void read_queues(ConfigReader& r, const std::string& dir, const Mapping& top, const QueueConfig& defaults,
                 std::vector<QueueConfig>& queues);

// `f` (a plugin's `config`) as JSON text in `json`; false, having reported
// why, when it cannot be.
bool read_plugin_config(ConfigReader& r, const Field& f, std::string& json);

}  // namespace echomq::daemon
