#include "limits_publisher.h"

#include <spdlog/spdlog.h>

#include "echomq/limits.h"

namespace echomq::daemon {

void write_config_limits(Executor& x, const std::vector<QueueConfig>& queues) {
  std::vector<const QueueConfig*> limited;
  std::vector<Command> reads;
  for (const QueueConfig& q : queues) {
    if (!q.limits) continue;
    limited.push_back(&q);
    reads.push_back(limit_fields_read(QueueKeys(q.name)));
  }
  if (reads.empty()) return;
  std::vector<Reply> held = x.pipeline(reads);
  std::vector<Command> writes;
  for (std::size_t i = 0; i < limited.size(); ++i) {
    const QueueConfig& q = *limited[i];
    const LimitFields fields = decode_limit_fields(held[i]);
    std::string broken;
    const std::optional<QueueLimits> was = fields.limits(&broken);
    if (was && *was == *q.limits) continue;
    if (!was) {
      spdlog::warn("queue={} its limits in meta were broken ({}); now {} (from the config)", q.name, broken,
                   describe(*q.limits));
    } else if (*was != QueueLimits{}) {
      spdlog::warn("queue={} its limits in meta were {}; now {} (from the config)", q.name, describe(*was),
                   describe(*q.limits));
    }
    for (Command& c : limits_write(QueueKeys(q.name), was.value_or(QueueLimits{}), *q.limits)) {
      writes.push_back(std::move(c));
    }
  }
  if (writes.empty()) return;
  for (const Reply& r : x.pipeline(writes)) {
    if (r.is_error()) {
      Error e = error_from_reply("limits", r.str);
      if (e.transient()) throw e;
      spdlog::warn("cannot write a queue's limits to its meta: {}", r.str);
    }
  }
}

}  // namespace echomq::daemon
