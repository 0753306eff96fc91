// Reading a configuration file into one YAML document, safely: only a
// regular file or a pipe, at most 4 MiB, one document, no aliases, nested
// at most 64 levels. Each refusal is reported as FILE:LINE: KEY: what.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "config/config_reader.h"

namespace echomq::daemon {

// Reads `path` into `root`; false, having reported why, when it cannot.
bool read_document(ConfigReader& r, const std::string& path, YAML::Node& root);

}  // namespace echomq::daemon
