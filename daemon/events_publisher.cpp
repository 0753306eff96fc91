#include "events_publisher.h"

#include <spdlog/spdlog.h>

#include "echomq/events.h"

namespace echomq::daemon {

namespace {
std::string shown(std::int64_t length) { return length > 0 ? std::to_string(length) : "off"; }
}  // namespace

void publish_config_events(Executor& x, const std::vector<QueueConfig>& queues) {
  if (queues.empty()) return;
  std::vector<Command> reads;
  reads.reserve(queues.size());
  for (const QueueConfig& q : queues) reads.push_back(events_read(QueueKeys(q.name)));
  const std::vector<Reply> held = x.pipeline(reads);
  std::vector<Command> writes;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const QueueConfig& q = queues[i];
    if (x.options().events) x.options().events->learnt(q.name, q.events);
    // Absent or broken in meta, either reads as off: rewritten either way.
    const bool same = decode_events(held[i]) == q.events && (q.events > 0 || held[i].is_nil());
    if (same) continue;
    if (!held[i].is_nil()) {
      spdlog::info("queue={} events in meta were {}; now {} (from the config)", q.name,
                   held[i].type == Reply::Type::String ? held[i].str : std::string("unreadable"), shown(q.events));
    }
    writes.push_back(events_write(QueueKeys(q.name), q.events));
  }
  if (writes.empty()) return;
  for (const Reply& r : x.pipeline(writes)) {
    if (r.is_error()) {
      Error e = error_from_reply("events", r.str);
      if (e.transient()) throw e;
      spdlog::warn("cannot write a queue's events length to its meta: {}", r.str);
    }
  }
}

}  // namespace echomq::daemon
