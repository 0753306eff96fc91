// WATCH as a test reads it: which keys a step signalled modified (what
// WATCH and client caching see), for tests that hold the module's writes
// to the scripts'.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "echomq/connection.h"
#include "valkey_server.h"

namespace echomq::test {

// The keys among these that step signalled modified: each is WATCHed on a
// connection of its own before step, and its transaction refused after.
inline std::vector<std::string> signalled(const ValkeyServer& server, const std::vector<std::string>& keys,
                                          const std::function<void()>& step) {
  std::vector<Connection> watchers;
  for (const std::string& key : keys) {
    watchers.push_back(Connection::open(server.options()));
    EXPECT_FALSE(watchers.back().command({"WATCH", key}).is_error());
  }
  step();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_FALSE(watchers[i].command({"MULTI"}).is_error());
    EXPECT_FALSE(watchers[i].command({"PING"}).is_error());
    if (watchers[i].command({"EXEC"}).is_nil()) out.push_back(keys[i]);
  }
  return out;
}

}  // namespace echomq::test
