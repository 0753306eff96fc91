#include "duties/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "echomq/job_id.h"
#include "echomq/transitions.h"

namespace echomq::daemon {

namespace {

// A wait longer than this is cut short, so the server's clock is read again
// (and a daemon paused, or a server clock stepped, is noticed) at least once
// a minute.
constexpr std::chrono::milliseconds kMaxWait{60000};
// Wake this much after a tick, so the server's clock has surely passed it.
constexpr std::int64_t kWakeLateMs = 2;

// "<fire_ms>:<id>" -> fire_ms; nullopt when there is no marker or it is
// malformed (enqueue_cron then refuses to fire: an operator's to mend).
std::optional<std::int64_t> marker_time(const Reply& r) {
  if (r.type != Reply::Type::String) return std::nullopt;
  const std::size_t colon = r.str.find(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    return std::stoll(r.str.substr(0, colon));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

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
    entries_.push_back(Entry{s, QueueKeys(s.queue), tick_rule(s), metrics.schedule(s.queue, s.name), false, {}});
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
    if (!e.published) publish(e);
    std::optional<std::int64_t> next = run(e, now);
    if (next && (!soonest || *next < *soonest)) soonest = *next;
  }
  if (!soonest) return kMaxWait;
  return std::clamp(std::chrono::milliseconds(*soonest - now + kWakeLateMs), std::chrono::milliseconds(1), kMaxWait);
}

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
  executor_.command({"HSET", e.keys.schedules, e.config.name, mine});
  e.published = true;
}

// The marker's last fire: the first round counts from there. A schedule
// never fired counts from misfire_grace back from now, so it fires a tick
// only within grace, and counts none missed.
std::optional<std::int64_t> Scheduler::last_fire(const Entry& e) {
  return marker_time(executor_.command({"HGET", e.keys.cron, e.config.name}));
}

std::optional<std::int64_t> Scheduler::run(Entry& e, std::int64_t now_ms) {
  bool count_missed = true;
  if (!e.handled_ms) {
    e.handled_ms = last_fire(e);
    if (!e.handled_ms) {
      e.handled_ms = now_ms - e.config.misfire_grace_ms - 1;
      count_missed = false;  // ticks before the schedule existed were never due
    }
  }
  if (auto due = e.rule.latest_between(*e.handled_ms, now_ms, TickRule::kMissedCountLimit)) {
    std::int64_t missed = count_missed ? due->earlier : 0;
    if (now_ms - due->tick_ms <= e.config.misfire_grace_ms) {
      fire(e, due->tick_ms);
    } else {
      ++missed;
    }
    if (missed > 0) {
      e.metrics.missed->Increment(static_cast<double>(missed));
      spdlog::warn("schedule {} of queue {}: {} ticks missed (more than misfire_grace {} ms late), the last at {} ms",
                   e.config.name, e.config.queue, missed, e.config.misfire_grace_ms, due->tick_ms);
    }
    e.handled_ms = due->tick_ms;
  }
  std::optional<std::int64_t> next = e.rule.next_after(std::max(*e.handled_ms, now_ms));
  if (next) e.metrics.next_fire->Set(static_cast<double>(*next) / 1000.0);
  return next;
}

void Scheduler::fire(Entry& e, std::int64_t tick_ms) {
  const std::string id = mint_job_id();
  const CronFire fire{e.config.name, tick_ms, e.config.lane, e.config.skip_overlap};
  switch (enqueue_cron(executor_, e.keys, id, e.config.payload, fire)) {
    case CronFireResult::Enqueued:
      e.metrics.enqueued->Increment();
      spdlog::info("schedule {} of queue {}: fired the tick at {} ms as {}", e.config.name, e.config.queue, tick_ms,
                   id);
      break;
    case CronFireResult::Already: e.metrics.already->Increment(); break;
    case CronFireResult::Skipped:
      e.metrics.skipped->Increment();
      spdlog::info("schedule {} of queue {}: skipped the tick at {} ms, the last fire's job is unfinished",
                   e.config.name, e.config.queue, tick_ms);
      break;
  }
}

}  // namespace echomq::daemon
