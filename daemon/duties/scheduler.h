// The scheduler: every schedule of the daemon's config on one timer. Tick
// times come from the server's clock (TIME), never the daemon's; each due
// tick is handed to enqueue_cron, whose marker lets exactly one call per
// tick enqueue however many daemons run the schedule. No leader, no lock.
//
// On start (and after losing the server) it fires at most the latest tick
// it missed, and only within misfire_grace; older ones are counted as
// missed. A new schedule (no marker yet) fires only a tick within grace.
// Each definition is published to emq:{q}:schedules for tools, with a
// warning when another daemon published a different one under the name.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "duties/periodic.h"
#include "schedule/next_tick.h"

namespace echomq::daemon {

// The JSON published to emq:{q}:schedules (PROTOCOL.md): cron or every_ms,
// timezone, lane, overlap, misfire_grace_ms.
std::string schedule_definition(const ScheduleConfig& s);

// A schedule's tick rule from its config (validated there).
TickRule tick_rule(const ScheduleConfig& s);

class Scheduler : public Periodic {
 public:
  Scheduler(const std::vector<ScheduleConfig>& schedules, const ConnectionOptions& server, Metrics& metrics,
            ReconnectPolicy reconnect = {});
  ~Scheduler() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  struct Entry {
    ScheduleConfig config;
    QueueKeys keys;
    TickRule rule;
    ScheduleMetrics metrics;
    bool published = false;
    std::optional<std::int64_t> handled_ms;  // the latest tick fired or counted; none before the first round
  };

  void publish(Entry& e);
  std::optional<std::int64_t> last_fire(const Entry& e);
  void fire(Entry& e, std::int64_t tick_ms);
  // Fires what is due; returns the next tick, if any.
  std::optional<std::int64_t> run(Entry& e, std::int64_t now_ms);

  std::vector<Entry> entries_;
  Executor executor_;
};

}  // namespace echomq::daemon
