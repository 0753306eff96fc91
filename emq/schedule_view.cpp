#include "schedule_view.h"

#include <map>

#include "echomq/errors.h"
#include "schedule/next_tick.h"

namespace echomq::cli {

namespace {

using daemon::TickRule;

std::optional<TickRule> rule_of(const nlohmann::json& d) {
  if (d.contains("every_ms") && d["every_ms"].is_number_integer() && d["every_ms"].get<std::int64_t>() > 0)
    return TickRule::every(d["every_ms"].get<std::int64_t>());
  if (d.contains("cron") && d["cron"].is_string()) {
    std::string zone = d.value("timezone", std::string("UTC"));
    return TickRule::cron(daemon::parse_cron(d["cron"].get<std::string>()), daemon::find_zone(zone));
  }
  return std::nullopt;
}

// A hash another writer broke (a key of another type) is one problem
// shown, not a page that fails; a server that is away still throws.
std::map<std::string, std::string> hash_of(const Reply& r, const std::string& key, std::string& problem) {
  std::map<std::string, std::string> out;
  if (r.is_error()) {
    Error e = error_from_reply("schedules", r.str);
    if (e.transient()) throw e;
    problem = key + ": " + r.str.substr(0, 120);
    return out;
  }
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

}  // namespace

std::vector<ScheduleView> read_schedules(Executor& x, const QueueKeys& q, std::int64_t now) {
  std::vector<Reply> r = x.pipeline({{"HGETALL", q.cron}, {"HGETALL", q.schedules}});
  std::string problem;
  const std::map<std::string, std::string> markers = hash_of(r[0], q.cron, problem);
  const std::map<std::string, std::string> definitions = hash_of(r[1], q.schedules, problem);
  std::vector<ScheduleView> out;
  if (!problem.empty()) {
    ScheduleView broken;
    broken.queue = q.queue;
    broken.problem = problem;
    out.push_back(std::move(broken));
  }
  for (const auto& [name, text] : definitions) {
    ScheduleView v;
    v.queue = q.queue;
    v.name = name;
    v.definition = nlohmann::json::parse(text, nullptr, false);
    if (auto m = markers.find(name); m != markers.end()) {
      std::size_t colon = m->second.find(':');
      try {
        v.last_fire_ms = std::stoll(m->second.substr(0, colon));
        v.last_job = colon == std::string::npos ? "" : m->second.substr(colon + 1);
      } catch (const std::exception&) {
        v.problem = "marker '" + m->second + "' is not <fire_ms>:<job id>";
      }
    }
    try {
      std::optional<TickRule> rule = v.definition.is_discarded() ? std::nullopt : rule_of(v.definition);
      if (!rule) {
        v.problem = "definition is not one this tool reads: " + text;
      } else {
        v.next_fire_ms = rule->next_after(now);
        // Ticks since the last fire that can no longer fire (past grace).
        std::int64_t grace = v.definition.value("misfire_grace_ms", std::int64_t{60000});
        if (v.last_fire_ms) {
          if (auto due = rule->latest_between(*v.last_fire_ms, now - grace, TickRule::kMissedCountLimit))
            v.missed = due->earlier + 1;
        }
      }
    } catch (const std::exception& e) {
      v.problem = e.what();
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string describe_definition(const ScheduleView& v) {
  if (v.definition.is_discarded() || !v.definition.is_object()) return "?";
  if (v.definition.contains("every_ms") && v.definition["every_ms"].is_number_integer())
    return "every " + std::to_string(v.definition["every_ms"].get<std::int64_t>()) + " ms";
  if (v.definition.contains("cron") && v.definition["cron"].is_string()) {
    const nlohmann::json& zone = v.definition.contains("timezone") ? v.definition["timezone"] : nlohmann::json();
    return v.definition["cron"].get<std::string>() + " " + (zone.is_string() ? zone.get<std::string>() : "UTC");
  }
  return "?";
}

nlohmann::ordered_json schedule_json(const ScheduleView& v) {
  nlohmann::ordered_json o;
  o["queue"] = v.queue;
  o["name"] = v.name;
  o["definition"] = v.definition.is_discarded() ? nlohmann::json() : v.definition;
  o["last_fire_ms"] = v.last_fire_ms ? nlohmann::json(*v.last_fire_ms) : nlohmann::json();
  o["last_job"] = v.last_job.empty() ? nlohmann::json() : nlohmann::json(v.last_job);
  o["next_fire_ms"] = v.next_fire_ms ? nlohmann::json(*v.next_fire_ms) : nlohmann::json();
  o["missed"] = v.missed;
  if (!v.problem.empty()) o["problem"] = v.problem;
  return o;
}

}  // namespace echomq::cli
