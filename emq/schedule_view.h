// A queue's published schedules as tools show them (`emq schedules` and
// `emq web`): each definition from emq:{q}:schedules beside its marker in
// emq:{q}:cron, with the next fire and the ticks missed, all by the
// server's clock. One reader, so the CLI and the page never disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq::cli {

struct ScheduleView {
  std::string queue;
  std::string name;
  nlohmann::json definition;  // discarded when it is not JSON
  std::optional<std::int64_t> last_fire_ms;
  std::string last_job;  // the last fire's job id, "" for none
  std::optional<std::int64_t> next_fire_ms;
  std::int64_t missed = 0;  // ticks since the last fire past misfire_grace
  std::string problem;      // a definition or marker this tool cannot read
};

// One round trip: the queue's schedules, by name, at server time now_ms.
// A key of the wrong type (another writer's) comes first as a view with no
// name and its problem; only a server that is away throws.
std::vector<ScheduleView> read_schedules(Executor& x, const QueueKeys& q, std::int64_t now_ms);

// "30 2 * * * Europe/Berlin", "every 30000 ms", or "?" for one not read.
std::string describe_definition(const ScheduleView& v);

// The object `emq schedules --json` prints for one schedule.
nlohmann::ordered_json schedule_json(const ScheduleView& v);

}  // namespace echomq::cli
