// What the schedule end-to-end tests share: an emqd config around a list
// of schedules, the server's clock, and the rows a schedule made.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "echomq/connection.h"
#include "valkey_server.h"

namespace echomq::test {

// A daemon of one queue (work, /bin/true) that runs `schedules`, the YAML
// list items under `schedules:`.
inline std::string schedule_config(const ValkeyServer& server, const std::string& schedules) {
  return "valkey: { url: \"" + server.url() +
         "\" }\n"
         "metrics: { listen: \"\" }\n"
         "queues:\n"
         "  - name: work\n"
         "    handler: { type: exec, command: [/bin/true] }\n"
         "schedules:\n" +
         schedules;
}

// The server's clock, epoch ms: the only clock schedules go by.
inline std::int64_t server_ms(Connection& c) {
  Reply t = c.command({"TIME"});
  return std::stoll(t.elements.at(0).str) * 1000 + std::stoll(t.elements.at(1).str) / 1000;
}

// The ids of the queue's rows made by the schedule (pending: nothing consumes it).
inline std::set<std::string> scheduled_rows(const ValkeyServer& server, const std::string& queue,
                                            const std::string& name) {
  Connection c = Connection::open(server.options());
  std::set<std::string> out;
  for (const Reply& id : c.command({"ZRANGE", "emq:{" + queue + "}:pending", "0", "-1"}).elements) {
    Reply s = c.command({"HGET", "emq:{" + queue + "}:job:" + id.str, "schedule"});
    if (s.type == Reply::Type::String && s.str == name) out.insert(id.str);
  }
  return out;
}

}  // namespace echomq::test
