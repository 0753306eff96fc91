#include "duties/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "schedule/cron_marker.h"

namespace echomq::daemon {

namespace {

// A wait longer than this is cut short, so the server's clock is read again
// (and a daemon paused, or a server clock stepped, is noticed) at least once
// a minute.
constexpr std::chrono::milliseconds kMaxWait{60000};
// Wake this much after a tick, so the server's clock has surely passed it.
constexpr std::int64_t kWakeLateMs = 2;
// A schedule in trouble (its marker broken or ahead of the clock, its cron
// hash of another type) looks again this often: a mend takes effect soon,
// at one read per look.
constexpr std::int64_t kTroubleRetryMs = 5000;

// What stops one schedule, said once, naming it; the others go on.
class ScheduleTrouble : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace

std::string schedule_definition(const ScheduleConfig& s) {
  nlohmann::json j;
  if (s.cron.empty()) {
    j["every_ms"] = s.every_ms;
  } else {
    j["cron"] = s.cron;
  }
  j["timezone"] = s.timezone;
  j["lane"] = s.lane;
  j["overlap"] = s.skip_overlap ? "skip" : "allow";
  j["misfire_grace_ms"] = s.misfire_grace_ms;
  if (!s.unique.empty()) {
    j["unique"] = s.unique;
    j["unique_mode"] = s.unique_mode.empty() ? (s.unique_for_ms > 0 ? "window" : "finished") : s.unique_mode;
    if (s.unique_for_ms > 0) j["unique_for_ms"] = s.unique_for_ms;
  }
  if (!s.group.empty()) j["group"] = s.group;
  return j.dump();
}

TickRule tick_rule(const ScheduleConfig& s) {
  if (s.cron.empty()) return TickRule::every(s.every_ms);
  return TickRule::cron(parse_cron(s.cron), find_zone(s.timezone));
}

Scheduler::Scheduler(const std::vector<ScheduleConfig>& schedules, const ConnectionOptions& server, Metrics& metrics,
                     ReconnectPolicy reconnect)
    : Periodic("scheduler"), executor_(server, std::move(reconnect), &metrics) {
  for (const ScheduleConfig& s : schedules) {
    entries_.emplace_back(s, QueueKeys(s.queue), tick_rule(s), metrics.schedule(s.queue, s.name));
  }
}

Scheduler::~Scheduler() {
  request_stop();
  join();
}

std::chrono::milliseconds Scheduler::tick() {
  const std::int64_t now = executor_.server_time_ms();
  std::optional<std::int64_t> soonest;
  for (Entry& e : entries_) {
    std::optional<std::int64_t> next = round(e, now);
    if (next && (!soonest || *next < *soonest)) soonest = *next;
  }
  if (!soonest) return kMaxWait;
  return std::clamp(std::chrono::milliseconds(*soonest - now + kWakeLateMs), std::chrono::milliseconds(1), kMaxWait);
}

// One schedule's part of a round. What is wrong with this schedule alone
// (its marker, its cron hash) stops only it, said once naming it; a server
// that is away ends the round, for Periodic to say and retry.
std::optional<std::int64_t> Scheduler::round(Entry& e, std::int64_t now_ms) {
  if (!e.published) publish(e);
  std::string trouble;
  try {
    std::optional<std::int64_t> next = run(e, now_ms);
    if (!e.trouble.empty()) spdlog::info("schedule {} of queue {}: runs again", e.config.name, e.config.queue);
    e.trouble.clear();
    return next;
  } catch (const Error& err) {
    if (err.transient()) throw;
    trouble = err.what();
  } catch (const std::exception& err) {
    trouble = err.what();
  }
  e.handled_ms.reset();  // the marker is read again at the next look
  if (trouble != e.trouble) {
    spdlog::warn("schedule {} of queue {}: {} (looked at again every {} s; the other schedules go on)", e.config.name,
                 e.config.queue, trouble, kTroubleRetryMs / 1000);
    e.trouble = std::move(trouble);
  }
  return now_ms + kTroubleRetryMs;
}

// A definition tools cannot be shown is said once; the schedule fires all
// the same (publishing is for tools), and it is tried again every round.
void Scheduler::publish(Entry& e) {
  const std::string mine = schedule_definition(e.config);
  const Reply theirs = executor_.command({"HGET", e.keys.schedules, e.config.name});
  if (theirs.type == Reply::Type::String && theirs.str != mine) {
    nlohmann::json a = nlohmann::json::parse(theirs.str, nullptr, false);
    if (a != nlohmann::json::parse(mine)) {
      spdlog::warn(
          "schedule {} of queue {}: another daemon published a different definition ({}); this daemon "
          "runs {} (config line {}). The marker is shared: both fire into the same ticks' marker",
          e.config.name, e.config.queue, theirs.str, mine, e.config.line);
    }
  }
  const Reply set = executor_.command({"HSET", e.keys.schedules, e.config.name, mine});
  if (set.is_error()) {
    const Error err = error_from_reply("publish", set.str);
    if (err.transient()) throw err;
    if (!e.publish_failed) {
      spdlog::warn(
          "schedule {} of queue {}: cannot publish its definition to {} ({}): tools do not show it; it fires "
          "all the same",
          e.config.name, e.config.queue, e.keys.schedules, set.str);
    }
    e.publish_failed = true;
    return;
  }
  e.published = true;
}

// The schedule's marker, nullopt when there is none. A marker enqueue_cron
// would refuse, or a cron hash that is not one, stops the schedule.
std::optional<CronMarker> Scheduler::marker(const Entry& e) {
  const Reply r = executor_.command({"HGET", e.keys.cron, e.config.name});
  if (r.is_nil()) return std::nullopt;
  if (r.is_error()) {
    const Error err = error_from_reply("schedule marker", r.str);
    if (err.transient()) throw err;
    throw ScheduleTrouble("cannot read its marker in " + e.keys.cron + " (" + r.str.substr(0, 120) +
                          "): every schedule of the queue stops until that key is a hash (DEL it if it holds "
                          "nothing else; the schedules then fire from their next tick)");
  }
  std::optional<CronMarker> m = parse_cron_marker(r.str);
  if (!m) {
    throw ScheduleTrouble("its marker '" + marker_excerpt(r.str) + "' is not <fire_ms>:<job id> (" + e.keys.cron +
                          "): the schedule stops rather than risk firing a tick twice. Mend it, or delete it to "
                          "fire from the next tick: HDEL " +
                          e.keys.cron + " " + e.config.name);
  }
  return m;
}

// Where the first round counts from: the marker's last fire; with no
// marker, now (the first tick fired is at or after the daemon first saw
// the schedule, never one from before it existed, and none is missed).
// A marker ahead of the server's clock holds the schedule: enqueue_cron
// never moves it back, so no tick fires before it.
std::int64_t Scheduler::counting_from(Entry& e, std::int64_t now_ms, bool& count_missed) {
  const std::optional<CronMarker> m = marker(e);
  count_missed = m.has_value();
  if (!m) return now_ms - 1;
  if (m->fire_ms > now_ms + kMarkerAheadMs) {
    if (auto next = e.rule.next_after(m->fire_ms)) e.metrics.next_fire->Set(static_cast<double>(*next) / 1000.0);
    throw ScheduleTrouble("its marker " + marker_excerpt(m->text) +
                          " is ahead of the server's clock: no tick fires before " + std::to_string(m->fire_ms) +
                          " ms (the server's clock stepped back, or the marker was written by hand). To fire from "
                          "the next tick, delete it: HDEL " +
                          e.keys.cron + " " + e.config.name);
  }
  return m->fire_ms;
}

std::optional<std::int64_t> Scheduler::run(Entry& e, std::int64_t now_ms) {
  // Ahead of the clock in memory (the server's clock went back), or maybe
  // moved by another writer (enqueue_cron said the tick was taken): the
  // marker is read again.
  if (e.reread_marker || (e.handled_ms && *e.handled_ms > now_ms + kMarkerAheadMs)) e.handled_ms.reset();
  e.reread_marker = false;
  bool count_missed = true;
  if (!e.handled_ms) e.handled_ms = counting_from(e, now_ms, count_missed);
  if (auto due = e.rule.latest_between(*e.handled_ms, now_ms, TickRule::kMissedCountLimit)) {
    std::int64_t missed = count_missed ? due->earlier : 0;
    // A tick that came while this scheduler waited for it is on time if
    // woken for within kOnTimeMs; misfire_grace is for ticks it did not wait for.
    const bool waited_for = e.last_round_ms && due->tick_ms > *e.last_round_ms;
    const std::int64_t grace =
        waited_for ? std::max(e.config.misfire_grace_ms, TickRule::kOnTimeMs) : e.config.misfire_grace_ms;
    e.handled_ms = due->tick_ms;
    if (now_ms - due->tick_ms <= grace) {
      fire(e, due->tick_ms);
    } else {
      ++missed;
    }
    if (missed > 0) {
      e.metrics.missed->Increment(static_cast<double>(missed));
      spdlog::warn("schedule {} of queue {}: {} ticks missed (more than misfire_grace {} ms late), the last at {} ms",
                   e.config.name, e.config.queue, missed, e.config.misfire_grace_ms, due->tick_ms);
    }
  }
  e.last_round_ms = now_ms;
  std::optional<std::int64_t> next = e.rule.next_after(std::max(*e.handled_ms, now_ms));
  if (next) e.metrics.next_fire->Set(static_cast<double>(*next) / 1000.0);
  return next;
}

void Scheduler::fire(Entry& e, std::int64_t tick_ms) {
  const std::string id = mint_job_id();
  CronFire fire{e.config.name, tick_ms, e.config.lane, e.config.skip_overlap, {}};
  if (!e.config.unique.empty()) {
    fire.job.unique = UniqueKey{e.config.unique, unique_mode_from(e.config.unique_mode), e.config.unique_for_ms};
  }
  fire.group = e.config.group;
  CronFireResult result;
  KeyHolder holder;
  try {
    result = decode_enqueue_cron(executor_.eval(enqueue_cron_call(e.keys, id, e.config.payload, fire)), &holder);
  } catch (const Error& err) {
    if (!err.transient()) marker(e);  // a broken marker or cron hash is said in its own words
    throw;
  }
  switch (result) {
    case CronFireResult::Enqueued:
      e.metrics.enqueued->Increment();
      spdlog::info("schedule {} of queue {}: fired the tick at {} ms as {}", e.config.name, e.config.queue, tick_ms,
                   id);
      break;
    case CronFireResult::Already:
      e.metrics.already->Increment();
      e.reread_marker = true;  // another daemon's fire, or a marker someone moved ahead
      break;
    case CronFireResult::Skipped:
      e.metrics.skipped->Increment();
      spdlog::info("schedule {} of queue {}: skipped the tick at {} ms, the last fire's job is unfinished",
                   e.config.name, e.config.queue, tick_ms);
      break;
    case CronFireResult::KeyHeld:
    case CronFireResult::Replaced:
      e.metrics.held->Increment();
      spdlog::info("schedule {} of queue {}: the tick at {} ms {}: unique key {} is held by {} ({})", e.config.name,
                   e.config.queue, tick_ms,
                   result == CronFireResult::Replaced ? "replaced the holder's payload" : "enqueued nothing",
                   e.config.unique, holder.id, holder.state);
      break;
  }
}

}  // namespace echomq::daemon
