// defaults and queues: each queue's settings over the defaults', its
// handler by type, the program it runs found as execvp would find it.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "config/config_paths.h"
#include "config/config_sections.h"
#include "text/duration.h"
#include "echomq/keyspace.h"

namespace echomq::daemon {

namespace {

// "exec, pool or plugin"
std::string type_names() {
  const std::vector<std::string> names = handler_type_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

// The keys of defaults and of a handler that are not plain values.
class QueueReader {
 public:
  QueueReader(ConfigReader& reader, std::string dir) : r_(reader), dir_(std::move(dir)) {}

  // `limits:` { max_active: N, rate: { max: N, per: 1s } }; what it leaves
  // out is off. Absent, the limits are left as they were (the defaults').
  void read_limits(const Mapping& m, unsigned place, std::optional<QueueLimits>& out) {
    const Field* field = m.get("limits");
    if (field == nullptr) return;
    Mapping lm;
    if (!read_mapping(r_, *field, place, "limits", lm)) return;
    QueueLimits l;
    bool ok = true;
    if (const Field* f = lm.get("max_active")) {
      std::int64_t n = 0;
      ok = r_.integer(*f, 1, kMaxActiveLimit, n, "it counts jobs holding a lease at once, across every daemon") && ok;
      l.max_active = n;
    }
    if (const Field* rate = lm.get("rate")) ok = read_rate(*rate, place, "limits.rate", l.rate) && ok;
    if (ok) out = l;
  }

  // `rate: { max: N, per: 1s }`, both keys given.
  bool read_rate(const Field& rate, unsigned place, const std::string& section, std::optional<RateLimit>& out) {
    Mapping rm;
    if (!read_mapping(r_, rate, place, section, rm)) return false;
    const Field* max = rm.get("max");
    const Field* per = rm.get("per");
    bool ok = true;
    if (max == nullptr || per == nullptr) {
      r_.error(rate, "expected both max and per, e.g. { max: 100, per: 1s }");
      ok = false;
    }
    RateLimit rl;
    if (max != nullptr) ok = r_.integer(*max, 1, kMaxActiveLimit, rl.max, "claims per window") && ok;
    if (per != nullptr) ok = read_window(*per, rl.window_ms) && ok;
    out = rl;
    return ok;
  }

  // `groups:` { default: POLICY, overrides: { GROUP: POLICY } }, POLICY
  // being { weight, max_active, rate } (and paused, for a group). Absent,
  // the groups are left as they were (the defaults').
  void read_groups(const Mapping& m, unsigned place, std::optional<QueueGroups>& out) {
    const Field* field = m.get("groups");
    if (field == nullptr) return;
    Mapping gm;
    if (!read_mapping(r_, *field, place, "groups", gm)) return;
    QueueGroups g;
    bool ok = true;
    if (const Field* d = gm.get("default")) ok = read_policy(*d, place, false, g.fallback) && ok;
    if (const Field* o = gm.get("overrides")) ok = read_overrides(*o, place, g.overrides) && ok;
    if (ok) out = g;
  }

  bool read_overrides(const Field& field, unsigned place, std::map<std::string, GroupPolicy>& out) {
    if (field.value.IsNull()) return true;
    if (!field.value.IsMap()) {
      r_.error(field,
               "expected a mapping of GROUP: { weight, max_active, rate, paused }, got " + describe_value(field.value));
      return false;
    }
    bool ok = true;
    std::map<std::string, int> seen;
    for (auto it = field.value.begin(); it != field.value.end(); ++it) {
      const int line = it->first.Mark().line + 1;
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      const Field entry{field.key + "." + name, it->second, line};
      if (!valid_group_name(name)) {
        r_.error(line, field.key,
                 "expected group names of 1-128 bytes of A-Z a-z 0-9 _ . : - (the default policy is groups.default), "
                 "got " +
                     describe_value(it->first));
        ok = false;
      } else if (auto first = seen.find(name); first != seen.end()) {
        r_.error(line, entry.key, "duplicate group, first given at line " + std::to_string(first->second));
        ok = false;
      } else {
        seen.emplace(name, line);
        ok = read_policy(entry, place, true, out[name]) && ok;
      }
    }
    return ok;
  }

  // One policy; paused only for a group (the default cannot be paused).
  bool read_policy(const Field& field, unsigned place, bool group, GroupPolicy& out) {
    std::vector<std::string> allowed = keys_at(place, "groups.default");
    allowed.push_back("paused");
    Mapping pm;
    if (!r_.mapping(field, allowed, pm)) return false;
    bool ok = true;
    if (const Field* f = pm.get("weight")) {
      ok = r_.integer(*f, 1, kMaxGroupWeight, out.weight, "it is the group's claims per turn of the rotation") && ok;
    }
    if (const Field* f = pm.get("max_active")) {
      std::int64_t n = 0;
      ok = r_.integer(*f, 1, kMaxActiveLimit, n, "it counts the group's jobs holding a lease at once") && ok;
      out.max_active = n;
    }
    if (const Field* f = pm.get("rate")) ok = read_rate(*f, place, "groups.default.rate", out.rate) && ok;
    if (const Field* f = pm.get("paused")) {
      if (!group) {
        r_.error(*f, "the default policy cannot be paused; pause a group under overrides, or the queue (emq pause)");
        ok = false;
      } else {
        ok = r_.boolean(*f, out.paused) && ok;
      }
    }
    return ok;
  }

  // `events:` the stream's length, or off.
  void read_events(const Mapping& m, std::int64_t& out) {
    const Field* f = m.get("events");
    if (f == nullptr) return;
    if (f->value.IsScalar() && f->value.Scalar() == "off") {
      out = 0;
      return;
    }
    if (!f->value.IsScalar() || f->value.Scalar() == "on" || f->value.Scalar() == "true") {
      r_.error(
          *f, "expected the events stream's length, 1..10000000 (e.g. 10000), or off; got " + describe_value(f->value));
      return;
    }
    r_.integer(*f, 1, kMaxEventsLength, out, "it is the most entries the queue's stream keeps (about), or off");
  }

  // A window: a duration of 1 ms..24 h.
  bool read_window(const Field& f, std::int64_t& ms) {
    const std::optional<std::int64_t> d = parse_duration_ms(f.value.IsScalar() ? f.value.Scalar() : "");
    if (d && *d >= 1 && *d <= kMaxWindowMs) {
      ms = *d;
      return true;
    }
    r_.error(f,
             "expected a window of 1ms to 24h, a whole number and a unit (ms, s, m, h, d) such as 1s or 500ms, got " +
                 describe_value(f.value));
    return false;
  }

  // The handler keys defaults may carry too, past the plain ones.
  void read_process_settings(const Mapping& m, HandlerConfig& h) {
    if (auto f = m.get("permanent_exit_codes")) read_exit_codes(*f, h.permanent_exit_codes);
    if (auto f = m.get("env")) read_env(*f, h.env);
  }

  void read_exit_codes(const Field& field, std::vector<int>& codes) {
    std::vector<Field> items;
    if (!r_.sequence(field, "a list of exit codes, e.g. [65, 78]", items)) return;
    std::vector<int> read;
    bool ok = true;
    for (const Field& item : items) {
      int code = 0;
      ok = r_.integer(item, 1, 255, code, "exit 0 completes the job") && ok;
      read.push_back(code);
    }
    if (ok) codes = read;
  }

  // Merged into what defaults set, name by name: a queue adds to the shared
  // environment rather than having to repeat it.
  void read_env(const Field& field, std::map<std::string, std::string>& env) {
    if (field.value.IsNull()) return;
    if (!field.value.IsMap()) {
      r_.error(field, "expected a mapping of NAME: value, got " + describe_value(field.value));
      return;
    }
    std::map<std::string, int> seen;
    for (auto it = field.value.begin(); it != field.value.end(); ++it) {
      const int line = it->first.Mark().line + 1;
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      const Field entry{field.key + "." + name, it->second, line};
      if (!is_ascii_word(name, "_") || (name[0] >= '0' && name[0] <= '9')) {
        r_.error(line, field.key,
                 "expected environment variable names of letters, digits and _, got " + describe_value(it->first));
      } else if (name.rfind("EMQ_", 0) == 0) {
        r_.error(line, entry.key, "EMQ_ names are set by emqd for each job; pick another name");
      } else if (auto first = seen.find(name); first != seen.end()) {
        r_.error(line, entry.key, "duplicate name, first given at line " + std::to_string(first->second));
      } else if (!it->second.IsScalar()) {
        // The value is never shown: environments carry secrets.
        r_.error(entry.line(), entry.key, "expected a string value (write \"\" for empty)");
      } else {
        seen.emplace(name, line);
        env[name] = it->second.Scalar();
      }
    }
  }

  void read_queues(const Mapping& top, const QueueConfig& defaults, std::vector<QueueConfig>& queues) {
    const Field* list = top.get("queues");
    if (list == nullptr) {
      r_.error(top.line, "queues", "missing; expected a list of queues, each with a name and a handler");
      return;
    }
    std::vector<Field> items;
    if (list->value.IsNull() || (list->value.IsSequence() && list->value.size() == 0)) {
      r_.error(*list, "expected at least one queue (- name: ..., handler: ...)");
      return;
    }
    if (!r_.sequence(*list, "a list of queues (- name: ...)", items)) return;
    std::map<std::string, int> first_line;
    for (const Field& item : items) {
      QueueConfig q = defaults;
      if (read_queue(item, q, first_line)) queues.push_back(std::move(q));
    }
  }

  bool read_queue(const Field& item, QueueConfig& q, std::map<std::string, int>& first_line) {
    Mapping m;
    if (!item.value.IsMap()) {
      r_.error(item, "expected a mapping with name and handler, got " + describe_value(item.value));
      return false;
    }
    if (!read_mapping(r_, item, kQueue, "", m)) return false;
    if (const Field* name = m.get("name")) {
      if (r_.string(*name, q.name)) {
        if (!valid_queue_name(q.name)) {
          r_.error(*name,
                   "expected 1-64 characters of A-Z a-z 0-9 _ . - (no {, }, : or space), got \"" + q.name + "\"");
        } else if (auto first = first_line.find(q.name); first != first_line.end()) {
          r_.error(*name,
                   "duplicate queue name " + q.name + ", first defined at line " + std::to_string(first->second));
        } else {
          first_line.emplace(q.name, name->line());
        }
      }
    } else {
      r_.error(m.line, m.child("name"), "missing; expected the queue's name");
    }
    read_plain(r_, m, kQueue, "", nullptr, &q);
    read_limits(m, kQueue, q.limits);
    read_groups(m, kQueue, q.groups);
    read_events(m, q.events);
    if (const Field* handler = m.get("handler")) {
      read_handler(*handler, q);
    } else {
      r_.error(m.line, m.child("handler"),
               "missing; expected a mapping with type (" + type_names() + ") and its command or path");
    }
    return true;
  }

  void read_handler(const Field& field, QueueConfig& q) {
    HandlerConfig& h = q.handler;
    Mapping m;
    if (!read_mapping(r_, field, kHandler, "", m)) return;
    if (field.value.IsNull()) {
      r_.error(field, "expected a mapping with type (" + type_names() + ") and its command or path");
      return;
    }
    const Field* type = m.get("type");
    std::string word;
    if (type == nullptr) {
      r_.error(m.line, m.child("type"), "missing; expected " + type_names());
      return;
    }
    if (!r_.word(*type, handler_type_names(), word)) return;
    h.type = *parse_handler_type(word);
    const unsigned place = handler_place(h.type);
    if (!only_keys_for(m, place, word)) return;

    read_plain(r_, m, place, "", nullptr, &q);
    read_process_settings(m, h);
    if (h.type == HandlerConfig::Type::Plugin) {
      read_plugin(m, h);
      return;
    }
    bool cwd_ok = true;
    // Without a cwd, the handler runs in the config file's directory, so
    // `command: [python3, worker.py]` finds worker.py beside the config, as
    // every other relative path in it is found, wherever emqd was started.
    h.cwd = dir_;
    if (auto f = m.get("cwd"); f && r_.string(*f, h.cwd) && !h.cwd.empty()) {
      h.cwd = absolute_from(dir_, h.cwd);
      std::string why = check_directory(h.cwd);
      if (!why.empty()) {
        r_.error(*f, "expected an existing directory, but " + why);
        cwd_ok = false;
      }
    }
    read_command(m, h, cwd_ok);
  }

  // Reports each key that the type does not read; false when there was one.
  bool only_keys_for(const Mapping& m, unsigned place, const std::string& word) {
    bool ok = true;
    const std::vector<std::string> allowed = keys_at(place, "");
    for (const Field& f : m.fields) {
      const std::string name = f.key.substr(m.key.size() + 1);
      if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
      std::vector<std::string> types;
      for (const std::string& other : handler_type_names()) {
        const std::vector<std::string> keys = keys_at(handler_place(*parse_handler_type(other)), "");
        if (std::find(keys.begin(), keys.end(), name) != keys.end()) types.push_back(other);
      }
      std::string applies = types.empty() ? "none" : types.size() == 1 ? types[0] : types[0] + " and " + types[1];
      r_.error(f.key_line, f.key, "applies only to type: " + applies + ", not " + word + "; remove it");
      ok = false;
    }
    return ok;
  }

  void read_command(const Mapping& m, HandlerConfig& h, bool cwd_ok) {
    const Field* f = m.get("command");
    if (f == nullptr) {
      r_.error(m.line, m.child("command"), "missing; expected the program and its arguments, e.g. [\"/usr/bin/cat\"]");
      return;
    }
    if (f->value.IsScalar()) {
      // No shell runs the command, so a string is not split: say how to write it.
      std::istringstream words(f->value.Scalar());
      std::string example;
      for (std::string w; words >> w;) example += (example.empty() ? "\"" : ", \"") + w + "\"";
      r_.error(*f, "expected a list of strings (argv, run without a shell), e.g. [" + example +
                       "]; a single string is not split");
      return;
    }
    std::vector<Field> items;
    if (!r_.sequence(*f, "a list of strings (argv, run without a shell)", items)) return;
    if (items.empty()) {
      r_.error(*f, "expected at least the program, e.g. [\"/usr/bin/cat\"]");
      return;
    }
    std::vector<std::string> argv;
    for (const Field& item : items) {
      std::string arg;
      if (!r_.string(item, arg)) return;
      argv.push_back(arg);
    }
    // A relative program runs from the handler's cwd; without a valid one
    // there is nothing sound to check it against (the cwd error says why).
    const bool relative = argv[0].find('/') != std::string::npos && argv[0][0] != '/';
    if (relative && !cwd_ok) return;
    const char* path_env = std::getenv("PATH");
    ProgramLookup found = find_program(argv[0], h.cwd.empty() ? dir_ : h.cwd, path_env ? path_env : "/bin:/usr/bin");
    if (!found.error.empty()) {
      r_.error(items[0], found.error);
      return;
    }
    argv[0] = found.path;
    h.command = argv;
  }

  void read_plugin(const Mapping& m, HandlerConfig& h) {
    if (const Field* f = m.get("path")) {
      if (r_.string(*f, h.path)) {
        h.path = absolute_from(dir_, h.path);
        std::string why = check_readable_file(h.path);
        if (!why.empty()) r_.error(*f, "expected the plugin's shared library, but " + why);
      }
    } else {
      r_.error(m.line, m.child("path"), "missing; expected the plugin's shared library (.so)");
    }
    if (const Field* f = m.get("config")) read_plugin_config(r_, *f, h.plugin_config_json);
  }

 private:
  ConfigReader& r_;
  std::string dir_;  // the config file's directory: relative paths start here
};

}  // namespace

void read_defaults(ConfigReader& r, const Field& field, QueueConfig& defaults) {
  Mapping m;
  if (!read_mapping(r, field, kDefaults, "", m)) return;
  read_plain(r, m, kDefaults, "", nullptr, &defaults);
  QueueReader reader(r, "");
  reader.read_process_settings(m, defaults.handler);
  reader.read_limits(m, kDefaults, defaults.limits);
  reader.read_groups(m, kDefaults, defaults.groups);
  reader.read_events(m, defaults.events);
}

void read_queues(ConfigReader& r, const std::string& dir, const Mapping& top, const QueueConfig& defaults,
                 std::vector<QueueConfig>& queues) {
  QueueReader(r, dir).read_queues(top, defaults, queues);
}

}  // namespace echomq::daemon
