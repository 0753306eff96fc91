// Jobs held at a gate by a real exec handler (tests/handlers/rendezvous.sh):
// each job leaves a file named for its id in a private directory and waits
// until there are `holds` + 1 files. Up to `holds` jobs wait there until the
// test opens the gate (`holds` more files), so a test sees which jobs run at
// once and chooses when they end; a job that starts after the gate opened
// passes at once. A job that waits 20 s fails on its own, and a stop
// (SIGTERM to its process group) ends it at any time.
#pragma once

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "config/config_types.h"
#include "process_probe.h"

namespace echomq::test {

class HandlerGate {
 public:
  explicit HandlerGate(int holds = 1) : holds_(holds) {}

  daemon::HandlerConfig handler() const {
    daemon::HandlerConfig c;
    c.command = {handler_program("rendezvous.sh")};
    c.env = {{"RENDEZVOUS_DIR", dir_.path()}, {"RENDEZVOUS_N", std::to_string(holds_ + 1)}};
    c.timeout_s = 60;  // a safety net: the script gives up after 20 s
    return c;
  }
  // The ids of the jobs that reached the gate (running, or run).
  std::set<std::string> arrived() const {
    std::set<std::string> ids;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kOpen, 0) != 0) ids.insert(name);
    }
    return ids;
  }
  void open() {
    for (int i = 0; i < holds_; ++i) std::ofstream(dir_.path() + "/" + kOpen + std::to_string(i)).put('\n');
  }

 private:
  static constexpr const char* kOpen = "open";
  TempDir dir_;
  int holds_;
};

}  // namespace echomq::test
