#include "config/config_schedules.h"

#include <charconv>
#include <map>
#include <utility>

#include "text/duration.h"
#include "echomq/keyspace.h"
#include "schedule/next_tick.h"

namespace echomq::daemon {

namespace {

constexpr std::int64_t kMinEveryMs = 1000;  // ticks below a second would be a job stream, not a schedule
constexpr std::int64_t kMaxEveryMs = std::int64_t{366} * 86400000;
constexpr std::int64_t kMaxGraceMs = std::int64_t{7} * 86400000;
constexpr std::int64_t kMaxUniqueForMs = std::int64_t{10000} * 86400000;  // under the wire's 10^12

bool duration(ConfigReader& r, const Field& f, std::int64_t lo, std::int64_t hi, const char* range_text,
              std::int64_t& out) {
  std::string text;
  if (!r.string(f, text)) return false;
  std::optional<std::int64_t> ms = parse_duration_ms(text);
  if (!ms) {
    r.error(f, "expected a duration such as 500ms, 30s, 5m, 1h or 1d, got \"" + text + "\"");
    return false;
  }
  if (*ms < lo || *ms > hi) {
    r.error(f, std::string("expected ") + range_text + ", got " + text);
    return false;
  }
  out = *ms;
  return true;
}

class ScheduleReader {
 public:
  ScheduleReader(ConfigReader& r, const std::vector<std::string>& keys) : r_(r), keys_(keys) {}

  bool read(const Field& item, ScheduleConfig& s) {
    if (!item.value.IsMap()) {
      r_.error(item, "expected a mapping with name, queue and cron or every, got " + describe_value(item.value));
      return false;
    }
    Mapping m;
    if (!r_.mapping(item, keys_, m)) return false;
    s.line = m.line;
    bool ok = read_name_and_queue(m, s);
    ok = read_ticks(m, s) && ok;
    if (const Field* f = m.get("payload")) ok = r_.string(*f, s.payload) && ok;
    if (const Field* f = m.get("lane")) ok = r_.integer(*f, std::int64_t{-1000}, std::int64_t{1000}, s.lane) && ok;
    if (const Field* f = m.get("overlap")) {
      std::string overlap;
      ok = r_.word(*f, {"allow", "skip"}, overlap) && ok;
      s.skip_overlap = overlap == "skip";
    }
    if (const Field* f = m.get("misfire_grace"))
      ok = duration(r_, *f, 0, kMaxGraceMs, "0s to 7d", s.misfire_grace_ms) && ok;
    if (const Field* f = m.get("group")) ok = read_group(*f, s) && ok;
    return read_unique(m, s) && ok;
  }

 private:
  bool read_name_and_queue(const Mapping& m, ScheduleConfig& s) {
    bool ok = true;
    const Field* queue = m.get("queue");
    if (queue == nullptr) {
      r_.error(m.line, m.child("queue"), "missing; expected the queue its jobs go to");
      ok = false;
    } else if (r_.string(*queue, s.queue) && !valid_queue_name(s.queue)) {
      r_.error(*queue, "expected 1-64 characters of A-Z a-z 0-9 _ . - (no {, }, : or space), got \"" + s.queue + "\"");
      ok = false;
    }
    const Field* name = m.get("name");
    if (name == nullptr) {
      r_.error(m.line, m.child("name"), "missing; expected the schedule's name, unique within its queue");
      return false;
    }
    if (!r_.string(*name, s.name)) return false;
    if (!valid_queue_name(s.name)) {  // a schedule name follows the queue name's rule
      r_.error(*name, "expected 1-64 characters of A-Z a-z 0-9 _ . -, got \"" + s.name + "\"");
      return false;
    }
    if (!ok) return false;
    auto [first, fresh] = first_line_.emplace(s.queue + "\n" + s.name, name->line());
    if (!fresh) {
      r_.error(*name, "duplicate schedule " + s.name + " in queue " + s.queue + ", first defined at line " +
                          std::to_string(first->second));
      return false;
    }
    return true;
  }

  // group: each fire's job goes to its group's turn.
  bool read_group(const Field& f, ScheduleConfig& s) {
    if (!r_.string(f, s.group)) return false;
    if (valid_group_name(s.group)) return true;
    r_.error(f, "expected a group of 1-128 characters of A-Z a-z 0-9 _ . : -, got \"" + s.group.substr(0, 80) + "\"");
    return false;
  }

  // unique, unique_mode and unique_for: each fire's job carries the key.
  bool read_unique(const Mapping& m, ScheduleConfig& s) {
    const Field* key = m.get("unique");
    const Field* mode = m.get("unique_mode");
    const Field* window = m.get("unique_for");
    bool ok = true;
    if (key != nullptr && r_.string(*key, s.unique) && !valid_unique_key(s.unique)) {
      r_.error(*key, "expected 1-128 characters of A-Z a-z 0-9 _ . : - (hash anything longer), got \"" +
                         s.unique.substr(0, 80) + "\"");
      ok = false;
    }
    if (mode != nullptr) ok = r_.word(*mode, {"finished", "started", "window", "replace"}, s.unique_mode) && ok;
    if (window != nullptr) ok = duration(r_, *window, 1, kMaxUniqueForMs, "1ms to 10000d", s.unique_for_ms) && ok;
    if (!ok) return false;
    const Field* loose = mode != nullptr ? mode : window;
    if (key == nullptr && loose != nullptr) {
      r_.error(*loose, "needs unique: the key each fire's job carries");
      return false;
    }
    if (s.unique_mode == "window" && window == nullptr) {
      r_.error(*mode, "window needs unique_for: how long the key is held, e.g. 10m");
      return false;
    }
    if (window != nullptr && mode != nullptr && s.unique_mode != "window") {
      r_.error(*window, "only unique_mode window takes a window (unique_mode is " + s.unique_mode + ")");
      return false;
    }
    return true;
  }

  bool read_ticks(const Mapping& m, ScheduleConfig& s) {
    const Field* cron = m.get("cron");
    const Field* every = m.get("every");
    if (cron != nullptr && every != nullptr) {
      r_.error(*every, "a schedule has cron or every, not both");
      return false;
    }
    if (cron == nullptr && every == nullptr) {
      r_.error(m.line, m.child("cron"), "missing; expected cron: \"<5 fields>\" (or @daily ...) or every: 30s");
      return false;
    }
    bool ok = true;
    if (const Field* zone = m.get("timezone")) {
      if (r_.string(*zone, s.timezone)) {
        try {
          find_zone(s.timezone);
        } catch (const ZoneError& e) {
          r_.error(*zone, e.what());
          ok = false;
        }
      } else {
        ok = false;
      }
      if (every != nullptr) {
        r_.error(*zone, "only a cron schedule has a timezone (every counts from the Unix epoch)");
        ok = false;
      }
    }
    if (every != nullptr) return duration(r_, *every, kMinEveryMs, kMaxEveryMs, "1s to 366d", s.every_ms) && ok;
    if (!r_.string(*cron, s.cron)) return false;
    try {
      parse_cron(s.cron);
    } catch (const CronError& e) {
      r_.error(*cron, std::string(e.what()) + " in \"" + s.cron + "\"");
      return false;
    }
    return ok;
  }

  ConfigReader& r_;
  const std::vector<std::string>& keys_;
  std::map<std::string, int> first_line_;  // queue \n name -> line
};

}  // namespace

void read_schedules(ConfigReader& r, const Field& list, const std::vector<std::string>& keys,
                    std::vector<ScheduleConfig>& out) {
  if (list.value.IsNull()) return;  // "schedules:" with nothing under it
  std::vector<Field> items;
  if (!r.sequence(list, "a list of schedules (- name: ..., queue: ..., cron: ...)", items)) return;
  ScheduleReader reader(r, keys);
  for (const Field& item : items) {
    ScheduleConfig s;
    if (reader.read(item, s)) out.push_back(std::move(s));
  }
}

}  // namespace echomq::daemon
