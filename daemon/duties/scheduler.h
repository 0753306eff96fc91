// The scheduler: every schedule of the daemon's config on one timer. Tick
// times come from the server's clock (TIME), never the daemon's; each due
// tick is handed to enqueue_cron, whose marker lets exactly one call per
// tick enqueue however many daemons run the schedule. No leader, no lock.
//
// On start (and after losing the server) it fires at most the latest tick
// it missed, and only within misfire_grace; older ones are counted as
// missed. A tick that comes while it waits fires when it wakes for it (see
// TickRule::kOnTimeMs), so misfire_grace: 0s fires on time. A new schedule
// (no marker yet) first fires the first tick at or after the daemon saw it.
// A schedule whose marker is broken, or ahead of the server's clock, or
// whose cron hash is of another type, stops alone: said once, naming it,
// and looked at again every few seconds. Each definition is published to
// emq:{q}:schedules for tools, with a warning when another daemon published
// a different one under the name.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "duties/periodic.h"
#include "schedule/cron_marker.h"
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
    Entry(ScheduleConfig c, QueueKeys k, TickRule r, ScheduleMetrics m)
        : config(std::move(c)), keys(std::move(k)), rule(std::move(r)), metrics(m) {}
    ScheduleConfig config;
    QueueKeys keys;
    TickRule rule;
    ScheduleMetrics metrics;
    bool published = false;
    bool publish_failed = false;                // said once
    std::optional<std::int64_t> handled_ms;     // the latest tick fired or counted; none: read the marker
    std::optional<std::int64_t> last_round_ms;  // the server's time at this schedule's last good round
    bool reread_marker = false;                 // enqueue_cron found the tick taken
    std::string trouble;                        // what stops it, as last said; "" while it runs
  };

  // This schedule's part of a round; returns its next tick, if any.
  std::optional<std::int64_t> round(Entry& e, std::int64_t now_ms);
  void publish(Entry& e);
  std::optional<CronMarker> marker(const Entry& e);
  std::int64_t counting_from(Entry& e, std::int64_t now_ms, bool& count_missed);
  void fire(Entry& e, std::int64_t tick_ms);
  // Fires what is due; returns the next tick, if any.
  std::optional<std::int64_t> run(Entry& e, std::int64_t now_ms);

  std::vector<Entry> entries_;
  Executor executor_;
};

}  // namespace echomq::daemon
