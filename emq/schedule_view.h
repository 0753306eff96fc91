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
#include "echomq/transitions.h"

namespace echomq::cli {

struct ScheduleView {
  std::string queue;
  std::string name;
  nlohmann::json definition;  // discarded when it is not JSON
  std::string group;          // its jobs' group ("group"), "" for none or one that does not read
  std::optional<std::int64_t> last_fire_ms;
  std::string last_job;  // the last fire's job id, "" for none
  std::optional<std::int64_t> next_fire_ms;
  // The marker's time while it is ahead of the server's clock: no tick
  // fires before it (enqueue_cron never moves a marker back).
  std::optional<std::int64_t> held_until_ms;
  std::int64_t missed = 0;  // ticks since the last fire past misfire_grace
  std::string problem;      // what is wrong with it, or holds it, in words
};

// One round trip: the queue's schedules, by name, at server time now_ms.
// A key of the wrong type (another writer's) comes first as a view with no
// name and its problem; only a server that is away throws.
std::vector<ScheduleView> read_schedules(Executor& x, const QueueKeys& q, std::int64_t now_ms);

// How a published definition fires: what `emq schedules fire` passes to
// enqueue_cron. nullopt, with `problem` naming the field, for a definition
// another writer broke: firing it with guesses could overlap a job that
// `overlap: skip` was meant to keep alone.
struct FireSettings {
  std::int64_t lane = 0;
  bool skip_overlap = false;
  JobOptions job{};   // its jobs' unique key ("unique", "unique_mode", "unique_for_ms")
  std::string group;  // its jobs' group ("group"), "" for none
};
std::optional<FireSettings> fire_settings(const std::string& definition, std::string& problem);

// "30 2 * * * Europe/Berlin", "every 30000 ms", or "?" for one not read.
std::string describe_definition(const ScheduleView& v);

// The object `emq schedules --json` prints for one schedule: a name or a
// job id that is not UTF-8 also as name_hex, last_job_hex (put_text).
nlohmann::ordered_json schedule_json(const ScheduleView& v);

}  // namespace echomq::cli
