#include "config/config_schema.h"

#include <algorithm>
#include <stdexcept>

#include "config/config.h"

#include "echomq/executor.h"

namespace echomq::daemon {

namespace {

// Limits, with the reason where it is not obvious.
constexpr double kDayMs = 86400000;
constexpr double kMonthMs = 30 * kDayMs;
constexpr double kTenYearsS = 10.0 * 365 * 86400;
constexpr double kMonthS = 30.0 * 86400;

using V = ValueType;

// The names lib's to_string gives the executor choices, spelt there only.
std::vector<std::string> executor_names() {
  std::vector<std::string> names;
  for (ExecutorChoice c : {ExecutorChoice::Auto, ExecutorChoice::Scripted, ExecutorChoice::Native}) {
    names.emplace_back(to_string(c));
  }
  return names;
}

const std::vector<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};

// A row: path, places, type; then range, words, default, label and target as the key needs.
KeySpec key(std::string path, unsigned places, ValueType type) {
  KeySpec k;
  k.path = std::move(path);
  k.places = places;
  k.type = type;
  return k;
}
KeySpec with(KeySpec k, std::string fallback, std::string label, SlotOf slot = nullptr) {
  k.fallback = std::move(fallback);
  k.label = std::move(label);
  k.slot = slot;
  return k;
}
KeySpec range(KeySpec k, double lo, double hi, const char* why = nullptr) {
  k.lo = lo;
  k.hi = hi;
  k.why = why;
  return k;
}
KeySpec words(KeySpec k, std::vector<std::string> w) {
  k.words = std::move(w);
  return k;
}

constexpr unsigned kPolicy = kDefaults | kQueue;          // a queue's own settings
constexpr unsigned kRunning = kDefaults | kExec | kPool;  // how a handler process runs

std::vector<KeySpec> build_schema() {
  // clang-format off
  return {
    // The document.
    key("valkey", kTop, V::Section),
    with(key("valkey.url", kTop, V::Custom), "valkey://127.0.0.1:6379/0", "valkey"),
    with(key("valkey.username", kTop, V::Custom), "", "valkey"),
    with(key("valkey.password_env", kTop, V::Custom), "", "password"),
    with(key("valkey.password_file", kTop, V::Custom), "", "password"),
    range(with(key("valkey.connect_timeout_ms", kTop, V::Integer), "2000", "timeouts",
               [](Config* c, QueueConfig*) { return Slot(&c->valkey.connect_timeout_ms); }),
          1, 600000, "0 would give up at once"),
    range(with(key("valkey.command_timeout_ms", kTop, V::Integer), "5000", "timeouts",
               [](Config* c, QueueConfig*) { return Slot(&c->valkey.command_timeout_ms); }),
          0, 600000, "0 waits for ever"),
    with(key("valkey.keyspace_events", kTop, V::Boolean), "false", "keyspace",
         [](Config* c, QueueConfig*) { return Slot(&c->valkey.keyspace_events); }),
    with(key("valkey.require_noeviction", kTop, V::Boolean), "false", "noeviction",
         [](Config* c, QueueConfig*) { return Slot(&c->valkey.require_noeviction); }),
    with(key("valkey.embedded_dir", kTop, V::Custom), "", "valkey"),
    words(with(key("valkey.executor", kTop, V::Word), "auto", "executor"), executor_names()),
    key("valkey.tls", kTop, V::Section),
    with(key("valkey.tls.ca_file", kTop, V::Custom), "", "tls"),
    with(key("valkey.tls.cert_file", kTop, V::Custom), "", "tls"),
    with(key("valkey.tls.key_file", kTop, V::Custom), "", "tls"),
    with(key("valkey.tls.server_name", kTop, V::Custom), "", "tls"),
    key("metrics", kTop, V::Section),
    with(key("metrics.listen", kTop, V::Custom), "127.0.0.1:9464", "metrics"),
    key("log", kTop, V::Mapping),
    words(with(key("log.level", kTop, V::Word), "info", "log",
               [](Config* c, QueueConfig*) { return Slot(&c->log.level); }), kLogLevels),
    words(with(key("log.format", kTop, V::Word), "text", "log",
               [](Config* c, QueueConfig*) { return Slot(&c->log.format); }), {"text", "json"}),
    key("reaper", kTop, V::Mapping),
    range(with(key("reaper.interval_ms", kTop, V::Integer), "1000", "reaper",
               [](Config* c, QueueConfig*) { return Slot(&c->reaper.interval_ms); }),
          10, 3600000, "a tighter loop only loads the server"),
    range(with(key("reaper.batch", kTop, V::Integer), "500", "reaper",
               [](Config* c, QueueConfig*) { return Slot(&c->reaper.batch); }), 1, 100000),
    key("shutdown", kTop, V::Mapping),
    range(with(key("shutdown.drain_timeout_s", kTop, V::Number), "30", "shutdown",
               [](Config* c, QueueConfig*) { return Slot(&c->shutdown.drain_timeout_s); }), 0, 86400),
    key("daemon", kTop, V::Section),
    with(key("daemon.name", kTop, V::String), "", "daemon",
         [](Config* c, QueueConfig*) { return Slot(&c->daemon.name); }),
    range(with(key("daemon.beat_s", kTop, V::Number), "5", "daemon",
               [](Config* c, QueueConfig*) { return Slot(&c->daemon.beat_s); }),
          0.1, 3600, "a daemon is taken for gone after 6 beats"),
    // Read by config_tracing.cpp, which fills what is left out from OTEL_*.
    key("tracing", kTop, V::Section),
    with(key("tracing.enabled", kTop, V::Boolean), "false", "tracing",
         [](Config* c, QueueConfig*) { return Slot(&c->tracing.enabled); }),
    with(key("tracing.endpoint", kTop, V::Custom), "http://localhost:4318", "tracing"),
    range(with(key("tracing.sample_ratio", kTop, V::Number), "1", "tracing",
               [](Config* c, QueueConfig*) { return Slot(&c->tracing.sample_ratio); }),
          0, 1, "it is the share of new traces kept"),
    with(key("tracing.service_name", kTop, V::String), "emqd", "tracing",
         [](Config* c, QueueConfig*) { return Slot(&c->tracing.service_name); }),
    with(key("tracing.headers_file", kTop, V::Custom), "", "tracing"),
    key("defaults", kTop, V::Section),
    key("queues", kTop, V::Custom),
    key("schedules", kTop, V::Custom),

    // A queue, and defaults for every queue.
    with(key("name", kQueue, V::Custom), "", "queue"),
    range(with(key("concurrency", kPolicy, V::Integer), "1", "concurrency",
               [](Config*, QueueConfig* q) { return Slot(&q->concurrency); }), 1, 4096),
    range(with(key("prefetch", kPolicy, V::Integer), "0", "prefetch",
               [](Config*, QueueConfig* q) { return Slot(&q->prefetch); }), 0, 4096),
    range(with(key("lease_ms", kPolicy, V::Integer), "30000", "lease",
               [](Config*, QueueConfig* q) { return Slot(&q->lease_ms); }),
          100, kDayMs, "86400000 is 24 h, and a lease under 100 ms cannot be renewed in time"),
    range(with(key("max_attempts", kPolicy, V::Integer), "5", "attempts",
               [](Config*, QueueConfig* q) { return Slot(&q->max_attempts); }), 1, 1000000),
    key("backoff", kPolicy, V::Mapping),
    range(with(key("backoff.initial_ms", kPolicy, V::Integer), "1000", "backoff",
               [](Config*, QueueConfig* q) { return Slot(&q->backoff.initial_ms); }), 0, kMonthMs),
    range(with(key("backoff.multiplier", kPolicy, V::Number), "2.0", "backoff",
               [](Config*, QueueConfig* q) { return Slot(&q->backoff.multiplier); }),
          1, 100, "below 1 the delays would shrink"),
    range(with(key("backoff.max_ms", kPolicy, V::Integer), "3600000", "backoff",
               [](Config*, QueueConfig* q) { return Slot(&q->backoff.max_ms); }), 0, kMonthMs),
    range(with(key("backoff.jitter", kPolicy, V::Number), "0.2", "backoff",
               [](Config*, QueueConfig* q) { return Slot(&q->backoff.jitter); }),
          0, 1, "it is the fraction of a delay taken off at random"),
    range(with(key("keep_completed_s", kPolicy, V::Integer), "0", "keep",
               [](Config*, QueueConfig* q) { return Slot(&q->keep_completed_s); }), 0, kTenYearsS),
    range(with(key("keep_dead_s", kPolicy, V::Integer), "604800", "keep",
               [](Config*, QueueConfig* q) { return Slot(&q->keep_dead_s); }), 0, kTenYearsS),
    range(with(key("poll_max_ms", kPolicy, V::Integer), "100", "idle poll",
               [](Config*, QueueConfig* q) { return Slot(&q->poll_max_ms); }), 1, 60000),
    // Read by the queue reader (config_queues.cpp): optional values, and a
    // queue's limits replace the defaults' whole.
    with(key("limits", kPolicy, V::Custom), "", "limits"),
    key("limits.max_active", kPolicy, V::Custom),
    key("limits.rate", kPolicy, V::Custom),
    key("limits.rate.max", kPolicy, V::Custom),
    key("limits.rate.per", kPolicy, V::Custom),
    // Read by the queue reader too: a queue's groups replace the defaults'
    // whole; overrides are keyed by group name, each with default's keys
    // and paused.
    with(key("groups", kPolicy, V::Custom), "", "groups"),
    key("groups.default", kPolicy, V::Custom),
    key("groups.default.weight", kPolicy, V::Custom),
    key("groups.default.max_active", kPolicy, V::Custom),
    key("groups.default.rate", kPolicy, V::Custom),
    key("groups.default.rate.max", kPolicy, V::Custom),
    key("groups.default.rate.per", kPolicy, V::Custom),
    key("groups.overrides", kPolicy, V::Custom),
    with(key("events", kPolicy, V::Custom), "10000", "events"),
    key("handler", kQueue, V::Section),

    // A queue's handler (and, where kDefaults is set, defaults for every handler).
    words(with(key("type", kHandler, V::Word), "", "handler"), handler_type_names()),
    with(key("command", kExec | kPool, V::Custom), "", "handler"),
    with(key("cwd", kExec | kPool, V::Custom), "", "cwd"),
    with(key("env", kRunning, V::Custom), "", "env"),
    with(key("inherit_env", kRunning, V::Boolean), "false", "env",
         [](Config*, QueueConfig* q) { return Slot(&q->handler.inherit_env); }),
    range(with(key("timeout_s", kRunning, V::Number), "0", "timeout",
               [](Config*, QueueConfig* q) { return Slot(&q->handler.timeout_s); }), 0, kMonthS, "0 means no limit"),
    range(with(key("kill_grace_s", kRunning, V::Number), "5", "timeout",
               [](Config*, QueueConfig* q) { return Slot(&q->handler.kill_grace_s); }), 0, 3600),
    range(with(key("max_output_bytes", kDefaults | kHandler, V::Integer), "1048576", "output",
               [](Config*, QueueConfig* q) { return Slot(&q->handler.max_output_bytes); }),
          0, 1 << 30, "1073741824 is 1 GiB"),
    with(key("permanent_exit_codes", kDefaults | kExec, V::Custom), "[65]", "permanent"),
    range(with(key("max_jobs_per_process", kPool, V::Integer), "0", "recycle",
               [](Config*, QueueConfig* q) { return Slot(&q->handler.max_jobs_per_process); }),
          0, 1000000000, "0 never recycles"),
    with(key("path", kPlugin, V::Custom), "", "handler"),
    with(key("config", kPlugin, V::Custom), "{}", "config keys"),

    // A schedule (config_schedules.cpp checks each, expressions and zones too).
    with(key("name", kSchedule, V::Custom), "", "schedule"),
    with(key("queue", kSchedule, V::Custom), "", "schedule"),
    with(key("cron", kSchedule, V::Custom), "", "when"),
    with(key("every", kSchedule, V::Custom), "", "when"),
    with(key("timezone", kSchedule, V::Custom), "UTC", "when"),
    with(key("payload", kSchedule, V::Custom), "", "job"),
    with(key("lane", kSchedule, V::Custom), "0", "job"),
    with(key("overlap", kSchedule, V::Custom), "allow", "overlap"),
    with(key("misfire_grace", kSchedule, V::Custom), "1m", "grace"),
    with(key("unique", kSchedule, V::Custom), "", "job"),
    with(key("unique_mode", kSchedule, V::Custom), "finished", "job"),
    with(key("unique_for", kSchedule, V::Custom), "", "job"),
    with(key("group", kSchedule, V::Custom), "", "job"),
  };
  // clang-format on
}

bool stands_in(const KeySpec& k, unsigned places) { return (k.places & places) != 0; }

std::string joined(const std::vector<std::string>& words, const char* sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

// Where a key of `k` stands, in the words of the advice.
std::string where_it_stands(const KeySpec& k) {
  std::vector<std::string> where;
  if (k.places & kTop) where.push_back(k.parent() + ":");
  if (k.places & kDefaults) where.push_back("defaults:");
  if (k.places & kQueue) {
    where.push_back("a queue");
  } else if (k.places & kHandler) {
    where.push_back("a queue's handler:");
  }
  if (k.places & kSchedule) where.push_back("a schedule");
  return joined(where, " or ");
}

}  // namespace

std::string KeySpec::parent() const {
  const std::size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string KeySpec::leaf() const { return path.substr(path.rfind('.') + 1); }

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

const KeySpec& key_spec(unsigned place, const std::string& path) {
  for (const KeySpec& k : config_schema()) {
    if (stands_in(k, place) && k.path == path) return k;
  }
  throw std::logic_error("config: no key " + path + " in the schema");
}

std::vector<std::string> keys_at(unsigned places, const std::string& section) {
  std::vector<std::string> keys;
  for (const KeySpec& k : config_schema()) {
    if (stands_in(k, places) && k.parent() == section) keys.push_back(k.leaf());
  }
  return keys;
}

std::string misplaced_advice(unsigned place, const std::string& section, const std::string& name) {
  if (!section.empty()) return "";
  for (const KeySpec& k : config_schema()) {
    if (k.leaf() != name || stands_in(k, place)) continue;
    if (place == kTop && (k.places & kTop) == 0 && k.parent().empty()) return "it belongs under " + where_it_stands(k);
    if (place == kTop && (k.places & kTop) != 0 && !k.parent().empty()) return "it belongs under " + k.parent() + ":";
    if (place == kQueue && stands_in(k, kHandler)) return "it belongs under handler:";
    if (place == kDefaults && stands_in(k, kQueue)) return "each queue has its own, under queues:";
    if (place == kDefaults && stands_in(k, kHandler)) return "set it per queue, under queues[].handler";
    if ((place & kHandler) != 0 && stands_in(k, kQueue)) return "it belongs to the queue, one level up";
  }
  return "";
}

std::vector<std::string> known_config_keys() {
  std::vector<std::string> keys;
  auto add = [&keys](const std::string& key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  };
  for (const KeySpec& k : config_schema()) {
    if (k.places & kTop) add(k.path);
    if (k.places & kDefaults) add("defaults." + k.path);
    if (k.places & kQueue) add("queues[]." + k.path);
    if (k.places & kHandler) add("queues[].handler." + k.path);
    if (k.places & kSchedule) add("schedules[]." + k.path);
  }
  return keys;
}

namespace {
// The handler types and their names in a file, spelt here only.
struct HandlerTypeName {
  HandlerConfig::Type type;
  const char* name;
  unsigned place;
};
constexpr HandlerTypeName kHandlerTypes[] = {
    {HandlerConfig::Type::Exec, "exec", kExec},
    {HandlerConfig::Type::Pool, "pool", kPool},
    {HandlerConfig::Type::Plugin, "plugin", kPlugin},
};
}  // namespace

unsigned handler_place(HandlerConfig::Type type) {
  for (const auto& t : kHandlerTypes) {
    if (t.type == type) return t.place;
  }
  return 0;
}

const char* to_string(HandlerConfig::Type type) {
  for (const auto& t : kHandlerTypes) {
    if (t.type == type) return t.name;
  }
  return "?";
}

std::optional<HandlerConfig::Type> parse_handler_type(const std::string& word) {
  for (const auto& t : kHandlerTypes) {
    if (word == t.name) return t.type;
  }
  return std::nullopt;
}

std::vector<std::string> handler_type_names() {
  std::vector<std::string> names;
  for (const auto& t : kHandlerTypes) names.emplace_back(t.name);
  return names;
}

}  // namespace echomq::daemon
