// Loading emqd's YAML configuration. Every problem is found before anything
// starts, and all of them are reported at once, each as
//   FILE:LINE: KEY: what was expected
// so an operator fixes a file in one pass.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "config/config_types.h"

namespace echomq::daemon {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> errors);
  // One line each, "FILE:LINE: KEY: what was expected".
  const std::vector<std::string>& errors() const noexcept { return errors_; }

 private:
  std::vector<std::string> errors_;
};

// Reads, validates and resolves (defaults inherited, passwords read from
// their env variable or file). Throws ConfigError listing every problem.
Config load_config(const std::string& path);

// The resolved configuration for --check-config: one block per queue, no
// secret (a password shows only where it comes from).
std::string describe(const Config& config);

// Every key the loader accepts, dotted, with lists as "[]": "valkey.url",
// "queues[].handler.command", from the schema table (config_schema.h);
// tests hold docs/configuration.md and config/emqd.example.yaml to it.
std::vector<std::string> known_config_keys();

}  // namespace echomq::daemon
