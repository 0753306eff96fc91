// What the module's tests share: a server that loads the emq module, an
// executor's options that choose one path on it, and the newest ACL LOG
// entry (where the module's own ACL checks leave their mark).
#pragma once

#include <map>
#include <string>

#include "echomq/connection.h"
#include "echomq/executor.h"
#include "valkey_server.h"

namespace echomq::test {

inline ValkeyServer::Options with_module() {
  ValkeyServer::Options o;
  o.load_module = true;
  return o;
}

inline ConnectionOptions choosing(const ValkeyServer& s, ExecutorChoice choice) {
  ConnectionOptions o = s.options();
  o.executor = choice;
  return o;
}

// ACL LOG 1 as field -> value ("reason", "object", ...); empty when the
// log is.
inline std::map<std::string, std::string> newest_acl_log_entry(Connection& admin) {
  Reply log = admin.command({"ACL", "LOG", "1"});
  std::map<std::string, std::string> entry;
  if (log.elements.empty()) return entry;
  for (std::size_t i = 0; i + 1 < log.elements[0].elements.size(); i += 2) {
    entry[log.elements[0].elements[i].str] = log.elements[0].elements[i + 1].str;
  }
  return entry;
}

}  // namespace echomq::test
