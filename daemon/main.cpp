// emqd: the EchoMQ worker daemon. Exit codes: 0 after a clean stop,
// 2 on a bad command line or configuration, 1 on any other fatal error.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "config/config.h"
#include "daemon.h"
#include "handlers/plugin_library.h"
#include "logging.h"
#include "signals.h"

int main(int argc, char** argv) {
  using namespace echomq::daemon;

  CLI::App app{"emqd: the EchoMQ worker daemon (wire emq/1)"};
  std::string config_path = "/etc/echomq/emqd.yaml";
  std::string log_level;
  bool check_only = false;
  app.add_option("-c,--config", config_path, "configuration file")->capture_default_str();
  app.add_flag("--check-config", check_only, "validate the configuration, print the resolved queues, and exit");
  // Checked with the command line, so --check-config refuses it too.
  app.add_option("--log-level", log_level, "override log.level: trace debug info warn error critical off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.set_version_flag("--version", std::string("emqd ") + EMQ_VERSION + " (wire emq/1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  Config config;
  try {
    config = load_config(config_path);
  } catch (const ConfigError& e) {
    for (const std::string& line : e.errors()) std::cerr << line << "\n";
    std::cerr << "emqd: " << e.errors().size() << " problem(s) in " << config_path << "; nothing was started\n";
    return 2;
  }
  // A plugin's ABI is checked by loading it, which load_config does not do.
  if (const auto problems = plugin_library_problems(config); !problems.empty()) {
    for (const std::string& line : problems) std::cerr << line << "\n";
    std::cerr << "emqd: " << problems.size() << " problem(s) in " << config_path << "; nothing was started\n";
    return 2;
  }
  if (check_only) {
    std::cout << describe(config);
    return 0;
  }

  try {
    setup_logging(log_level.empty() ? config.log.level : log_level, config.log.format);
  } catch (const std::exception& e) {
    std::cerr << "emqd: " << e.what() << "\n";
    return 2;
  }

  // Before any thread starts, so every thread inherits the mask.
  block_signals();
  try {
    Daemon daemon(std::move(config));
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::critical("emqd: {}", e.what());
    return 1;
  }
}
