#include "schedule_view.h"

#include <algorithm>
#include <map>

#include "echomq/bytes.h"
#include "echomq/errors.h"
#include "echomq/transitions.h"
#include "bytes_text.h"
#include "output.h"
#include "schedule/cron_marker.h"
#include "schedule/next_tick.h"

namespace echomq::cli {

namespace {

using daemon::TickRule;

constexpr std::size_t kShownTextBytes = 120;

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

void add_problem(ScheduleView& v, const std::string& what) { v.problem += (v.problem.empty() ? "" : "; ") + what; }

// Text another writer put there, fit for a message: quoted, or its bytes
// in hex when it is not UTF-8; cut to about kShownTextBytes.
std::string shown_text(const std::string& bytes) {
  const bool utf8 = is_utf8(bytes);
  const std::string head =
      utf8 ? std::string(utf8_prefix(bytes, kShownTextBytes)) : bytes.substr(0, kShownTextBytes / 2);
  const std::string more = head.size() < bytes.size() ? "..." : "";
  return utf8 ? "'" + head + more + "'" : "(not UTF-8: hex " + hex_encode(head) + more + ")";
}

// The marker, as the daemon reads it: broken, held (ahead of the clock),
// or the last fire.
void read_marker(ScheduleView& v, const QueueKeys& q, const std::string& text, std::int64_t now) {
  const std::optional<daemon::CronMarker> m = daemon::parse_cron_marker(text);
  if (!m) {
    add_problem(v, "marker " + shown_text(text) + " is not <fire_ms>:<job id>: the schedule stops until it is " +
                       "mended or deleted (HDEL " + q.cron + " " + v.name + ")");
    return;
  }
  v.last_fire_ms = m->fire_ms;
  v.last_job = m->job;
  if (m->fire_ms > now + daemon::kMarkerAheadMs) {
    v.held_until_ms = m->fire_ms;
    add_problem(v, "held until " + iso_time(m->fire_ms) + ": its marker is " +
                       std::to_string((m->fire_ms - now) / 1000) +
                       " s ahead of the server's clock (the clock stepped back, or the marker was written by hand); "
                       "no tick fires before then. To fire from the next tick: HDEL " +
                       q.cron + " " + v.name);
  }
}

// The next fire and the ticks missed, by the definition's rule.
void read_ticks(ScheduleView& v, const TickRule& rule, std::int64_t now) {
  v.next_fire_ms = rule.next_after(std::max(now, v.last_fire_ms.value_or(now)));
  // Ticks since the last fire that can no longer fire: past grace, and
  // past the running scheduler's own slack (so grace 0 misses nothing).
  const nlohmann::json& grace_field =
      v.definition.contains("misfire_grace_ms") ? v.definition["misfire_grace_ms"] : nlohmann::json(60000);
  const std::int64_t grace = grace_field.is_number_integer() ? grace_field.get<std::int64_t>() : 60000;
  if (v.last_fire_ms) {
    const std::int64_t late = std::max(grace, TickRule::kOnTimeMs);
    if (auto due = rule.latest_between(*v.last_fire_ms, now - late, TickRule::kMissedCountLimit))
      v.missed = due->earlier + 1;
  }
}

void read_definition(ScheduleView& v, const std::string& text, std::int64_t now) {
  std::string broken;
  if (const std::optional<FireSettings> fire = fire_settings(text, broken)) {
    v.group = fire->group;
  } else {
    add_problem(v, "its definition " + broken);
    if (!v.definition.is_object()) return;
  }
  try {
    std::optional<TickRule> rule = rule_of(v.definition);
    if (!rule) {
      add_problem(v, "its definition has no cron or every_ms this tool reads: " + shown_text(text));
    } else {
      read_ticks(v, *rule, now);
    }
  } catch (const std::exception& e) {
    add_problem(v, e.what());
  }
}

// The definition's unique key, as the daemon publishes it: false, with
// problem naming the field, for one another writer broke.
bool unique_settings(const nlohmann::json& d, FireSettings& s, std::string& problem) {
  if (!d.contains("unique")) return true;
  const nlohmann::json& key = d["unique"];
  const nlohmann::json mode = d.contains("unique_mode") ? d["unique_mode"] : nlohmann::json("finished");
  const nlohmann::json window = d.contains("unique_for_ms") ? d["unique_for_ms"] : nlohmann::json(0);
  UniqueKey u;
  if (key.is_string() && valid_unique_key(key.get<std::string>())) u.key = key.get<std::string>();
  if (mode.is_string()) u.mode = unique_mode_from(mode.get<std::string>());
  if (window.is_number_integer()) u.for_ms = window.get<std::int64_t>();
  const bool ok = !u.key.empty() && u.mode && window.is_number_integer() && u.for_ms >= 0 &&
                  (u.for_ms > 0) == (u.mode == UniqueMode::Window);
  if (!ok) {
    problem = "has a unique key that does not read (\"unique\", \"unique_mode\", \"unique_for_ms\"): " +
              d.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return false;
  }
  s.job.unique = std::move(u);
  return true;
}
}  // namespace

std::optional<FireSettings> fire_settings(const std::string& text, std::string& problem) {
  if (!is_utf8(text)) {
    problem = "is " + shown_text(text);
    return std::nullopt;
  }
  const nlohmann::json d = nlohmann::json::parse(text, nullptr, false);
  if (d.is_discarded() || !d.is_object()) {
    problem = "is not a JSON object: " + shown_text(text);
    return std::nullopt;
  }
  FireSettings s;
  if (d.contains("lane")) {
    const nlohmann::json& lane = d["lane"];
    if (!lane.is_number_integer() || lane.get<std::int64_t>() < kMinLane || lane.get<std::int64_t>() > kMaxLane) {
      problem = "has \"lane\": " + lane.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                ", and \"lane\" is not an integer in -1000..1000";
      return std::nullopt;
    }
    s.lane = lane.get<std::int64_t>();
  }
  if (d.contains("overlap")) {
    const nlohmann::json& overlap = d["overlap"];
    if (overlap != "allow" && overlap != "skip") {
      problem = "has \"overlap\": " + overlap.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                ", and \"overlap\" is not allow or skip";
      return std::nullopt;
    }
    s.skip_overlap = overlap == "skip";
  }
  if (d.contains("group")) {
    const nlohmann::json& group = d["group"];
    if (!group.is_string() || !valid_group_name(group.get<std::string>())) {
      problem = "has \"group\": " + group.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                ", and \"group\" is not 1-128 bytes of A-Z a-z 0-9 _ . : -";
      return std::nullopt;
    }
    s.group = group.get<std::string>();
  }
  return unique_settings(d, s, problem) ? std::optional<FireSettings>(s) : std::nullopt;
}

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
    // (A name that is text stays as it is: the page shows it, escaped.)
    if (!is_utf8(name)) {
      add_problem(v, "its name " + shown_text(name) +
                         " is not a schedule name (1-64 of A-Z a-z 0-9 _ . -): another writer's field in " +
                         q.schedules);
    }
    v.definition = nlohmann::json::parse(text, nullptr, false);
    if (auto m = markers.find(name); m != markers.end()) read_marker(v, q, m->second, now);
    read_definition(v, text, now);
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
  put_text(o, "name", v.name);
  o["definition"] = v.definition.is_discarded() ? nlohmann::json() : v.definition;
  o["group"] = v.group.empty() ? nlohmann::json() : nlohmann::json(v.group);
  o["last_fire_ms"] = v.last_fire_ms ? nlohmann::json(*v.last_fire_ms) : nlohmann::json();
  if (v.last_job.empty()) {
    o["last_job"] = nullptr;
  } else {
    put_text(o, "last_job", v.last_job);
  }
  o["next_fire_ms"] = v.next_fire_ms ? nlohmann::json(*v.next_fire_ms) : nlohmann::json();
  o["held_until_ms"] = v.held_until_ms ? nlohmann::json(*v.held_until_ms) : nlohmann::json();
  o["missed"] = v.missed;
  if (!v.problem.empty()) o["problem"] = v.problem;
  return o;
}

}  // namespace echomq::cli
