#include "config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/eventhandler.h>

#include "config_paths.h"
#include "config_reader.h"
#include "config_schedules.h"
#include "echomq/errors.h"
#include "echomq/keyspace.h"
#include "echomq/tls.h"
#include "echomq/url.h"
#include "listen_address.h"

namespace echomq::daemon {

namespace {

// The schema: every key emqd reads, by the mapping it sits in. The loader
// refuses any other key; known_config_keys() flattens this for the tests
// that keep the docs and the example in step.
struct KeySection {
  std::string path;
  std::vector<std::string> keys;
};

const std::vector<KeySection>& key_sections() {
  static const std::vector<KeySection> table = {
      {"", {"valkey", "metrics", "log", "reaper", "shutdown", "defaults", "queues", "schedules"}},
      {"valkey",
       {"url", "username", "password_env", "password_file", "connect_timeout_ms", "command_timeout_ms",
        "keyspace_events", "require_noeviction", "embedded_dir", "executor", "tls"}},
      {"valkey.tls", {"ca_file", "cert_file", "key_file", "server_name"}},
      {"metrics", {"listen"}},
      {"log", {"level", "format"}},
      {"reaper", {"interval_ms", "batch"}},
      {"shutdown", {"drain_timeout_s"}},
      {"defaults",
       {"concurrency", "prefetch", "lease_ms", "max_attempts", "backoff", "keep_completed_s", "keep_dead_s", "poll_max_ms",
        "timeout_s", "kill_grace_s", "max_output_bytes", "permanent_exit_codes", "inherit_env", "env"}},
      {"defaults.backoff", {"initial_ms", "multiplier", "max_ms", "jitter"}},
      {"queues[]",
       {"name", "concurrency", "prefetch", "lease_ms", "max_attempts", "backoff", "keep_completed_s", "keep_dead_s", "poll_max_ms",
        "handler"}},
      {"queues[].backoff", {"initial_ms", "multiplier", "max_ms", "jitter"}},
      {"schedules[]",
       {"name", "queue", "cron", "every", "timezone", "payload", "lane", "overlap", "misfire_grace"}},
      {"queues[].handler",
       {"type", "command", "cwd", "env", "inherit_env", "timeout_s", "kill_grace_s", "max_output_bytes",
        "permanent_exit_codes", "max_jobs_per_process", "path", "config"}},
  };
  return table;
}

const std::vector<std::string>& keys_of(const std::string& section) {
  for (const auto& s : key_sections()) {
    if (s.path == section) return s.keys;
  }
  throw std::logic_error("config: no key section " + section);
}

// Which handler keys each kind reads; `type` goes with all of them.
const std::vector<std::string>& handler_keys(HandlerConfig::Type type) {
  static const std::vector<std::string> exec = {"type",         "command",          "cwd",
                                                "env",          "inherit_env",      "timeout_s",
                                                "kill_grace_s", "max_output_bytes", "permanent_exit_codes"};
  static const std::vector<std::string> pool = {"type",         "command",          "cwd",
                                                "env",          "inherit_env",      "timeout_s",
                                                "kill_grace_s", "max_output_bytes", "max_jobs_per_process"};
  static const std::vector<std::string> plugin = {"type", "path", "config", "max_output_bytes"};
  switch (type) {
    case HandlerConfig::Type::Exec: return exec;
    case HandlerConfig::Type::Pool: return pool;
    case HandlerConfig::Type::Plugin: return plugin;
  }
  return exec;
}

// The advice for a key put in the wrong mapping, by where it was found.
const Misplaced& misplaced_at_top() {
  static const Misplaced m = {
      {"url", "it belongs under valkey:"},
      {"listen", "it belongs under metrics:"},
      {"level", "it belongs under log:"},
      {"concurrency", "it belongs under defaults: or a queue"},
      {"queue", "did you mean queues? (a list: - name: ...)"},
  };
  return m;
}

const Misplaced& misplaced_in_queue() {
  static const Misplaced m = [] {
    Misplaced out;
    for (const auto& key : keys_of("queues[].handler")) out.emplace_back(key, "it belongs under handler:");
    return out;
  }();
  return m;
}

const Misplaced& misplaced_in_defaults() {
  static const Misplaced m = {
      {"name", "each queue has its own, under queues:"},
      {"handler", "each queue has its own, under queues:"},
      {"type", "set it per queue, under queues[].handler"},
      {"command", "set it per queue, under queues[].handler"},
      {"cwd", "set it per queue, under queues[].handler"},
      {"path", "set it per queue, under queues[].handler"},
      {"config", "set it per queue, under queues[].handler"},
      {"max_jobs_per_process", "set it per queue, under queues[].handler"},
  };
  return m;
}

const Misplaced& misplaced_in_handler() {
  static const Misplaced m = [] {
    Misplaced out;
    for (const auto& key : keys_of("queues[]")) out.emplace_back(key, "it belongs to the queue, one level up");
    return out;
  }();
  return m;
}

// Limits, with the reason where it is not obvious.
constexpr std::int64_t kDayMs = 86400000;
constexpr std::int64_t kMonthMs = 30 * kDayMs;
constexpr std::int64_t kTenYearsS = 10LL * 365 * 86400;
constexpr double kMonthS = 30.0 * 86400;

const char* const kEmbeddedHasNoUsers =
    "url: embedded runs a private server with no users or password, reached only by emqd; remove this";

class Loader {
 public:
  Loader(ConfigReader& reader, std::string dir) : r_(reader), dir_(std::move(dir)) {}

  void load(const YAML::Node& root, Config& config) {
    Mapping top;
    if (!r_.mapping(Field{"", root, 0}, keys_of(""), top, misplaced_at_top())) return;
    if (auto f = top.get("valkey")) read_valkey(*f, config.valkey);
    if (auto f = top.get("metrics")) read_metrics(*f, config.metrics);
    if (auto f = top.get("log")) read_log(*f, config.log);
    if (auto f = top.get("reaper")) read_reaper(*f, config.reaper);
    if (auto f = top.get("shutdown")) read_shutdown(*f, config.shutdown);
    QueueConfig defaults;
    if (auto f = top.get("defaults")) read_defaults(*f, defaults);
    read_queues(top, defaults, config.queues);
    if (auto f = top.get("schedules")) read_schedules(r_, *f, keys_of("schedules[]"), config.schedules);
    if (config.valkey.embedded && config.valkey.embedded_dir.empty()) {
      config.valkey.embedded_dir = default_embedded_dir();
    }
  }

 private:
  ConfigReader& r_;
  std::string dir_;  // the config file's directory: relative paths start here

  std::string default_embedded_dir() const {
    // systemd's StateDirectory= sets this (a colon-separated list).
    if (const char* state = std::getenv("STATE_DIRECTORY"); state != nullptr && state[0] == '/') {
      std::string first(state);
      return first.substr(0, first.find(':'));
    }
    return absolute_from(dir_, "emqd-state");
  }

  void read_valkey(const Field& field, ValkeyConfig& v) {
    Mapping m;
    if (!r_.mapping(field, keys_of("valkey"), m)) return;
    ConnectionOptions from_url;
    bool url_ok = true;
    if (auto f = m.get("url")) url_ok = read_url(*f, v, from_url);
    if (auto f = m.get("username"); f && r_.string(*f, v.username)) {
      if (!v.username.empty() && !from_url.username.empty()) {
        r_.error(*f, "the url already names a user; give it in one place");
      } else if (!v.username.empty() && v.embedded) {
        r_.error(*f, kEmbeddedHasNoUsers);
      }
    }
    if (auto f = m.get("connect_timeout_ms")) {
      r_.integer(*f, std::int64_t{1}, std::int64_t{600000}, v.connect_timeout_ms, "0 would give up at once");
    }
    if (auto f = m.get("command_timeout_ms")) {
      r_.integer(*f, std::int64_t{0}, std::int64_t{600000}, v.command_timeout_ms, "0 waits for ever");
    }
    if (auto f = m.get("keyspace_events")) r_.boolean(*f, v.keyspace_events);
    if (auto f = m.get("require_noeviction")) r_.boolean(*f, v.require_noeviction);
    if (auto f = m.get("executor")) r_.word(*f, {"auto", "scripted", "native"}, v.executor);
    if (auto f = m.get("embedded_dir"); f && r_.string(*f, v.embedded_dir) && !v.embedded_dir.empty()) {
      v.embedded_dir = absolute_from(dir_, v.embedded_dir);
    }
    read_password(m, !from_url.password.empty(), v);
    if (v.embedded) check_embedded(m, v);
    if (auto f = m.get("tls")) read_tls(*f, url_ok ? &from_url : nullptr, v);
  }

  // What url: embedded needs of this host, said by --check-config rather
  // than found at start: a socket path that fits, and valkey-server.
  void check_embedded(const Mapping& m, const ValkeyConfig& v) {
    const Field* url = m.get("url");
    const Field* dir_field = m.get("embedded_dir");
    const std::string dir = v.embedded_dir.empty() ? default_embedded_dir() : v.embedded_dir;
    const std::string socket = embedded_socket_path(dir);
    if (socket.size() > kMaxSocketPath) {
      r_.error(dir_field != nullptr && !v.embedded_dir.empty() ? *dir_field : *url,
               "the embedded server's socket " + socket + " would be " + std::to_string(socket.size()) +
                   " bytes, over the " + std::to_string(kMaxSocketPath) +
                   " a unix socket path may have: set valkey.embedded_dir to a shorter directory");
    }
    const char* path_env = std::getenv("PATH");
    ProgramLookup found = find_program("valkey-server", dir_, path_env ? path_env : "/bin:/usr/bin");
    if (!found.error.empty()) {
      r_.error(*url, "url: embedded runs valkey-server; " + found.error +
                         ": install it (Debian: apt-get install valkey-server; or scripts/install-deps.sh) or point "
                         "valkey.url at a server");
    }
  }

  // from_url is null when the url is wrong (and reported already).
  void read_tls(const Field& field, const ConnectionOptions* from_url, ValkeyConfig& v) {
    Mapping m;
    if (!r_.mapping(field, keys_of("valkey.tls"), m)) return;
    if (v.embedded) {
      r_.error(field, "url: embedded is reached over a private unix socket, without TLS; remove this");
      return;
    }
    if (from_url != nullptr && !from_url->tls.enabled) {
      r_.error(field, "TLS needs a valkeys:// or rediss:// url; change the url's scheme, or remove this");
      return;
    }
    TlsOptions& t = v.tls;
    const Field* ca = tls_file(m, "ca_file", t.ca_file);
    const Field* cert = tls_file(m, "cert_file", t.cert_file);
    const Field* key = tls_file(m, "key_file", t.key_file);
    if (auto f = m.get("server_name"); f && r_.string(*f, t.server_name)) {
      static const std::regex kName("[A-Za-z0-9._:-]+");
      if (!std::regex_match(t.server_name, kName)) {
        r_.error(*f, "expected the host name or IP address the server's certificate holds (cache.example.com)");
      }
    }
    if (ca != nullptr) check_file(*ca, check_ca_file(t.ca_file));
    if ((cert == nullptr) != (key == nullptr)) {
      r_.error(cert != nullptr ? *cert : *key,
               "a client certificate needs both cert_file and key_file (its private key)");
      return;
    }
    if (cert != nullptr && check_file(*cert, check_cert_file(t.cert_file))) {
      check_file(*key, check_key_file(t.key_file, t.cert_file));
    }
  }

  // A path under valkey.tls, made absolute; null when absent or "".
  const Field* tls_file(const Mapping& m, const char* name, std::string& path) {
    const Field* f = m.get(name);
    if (f == nullptr || !r_.string(*f, path) || path.empty()) return nullptr;
    path = absolute_from(dir_, path);
    return f;
  }

  bool check_file(const Field& f, const std::string& why) {
    if (!why.empty()) r_.error(f, why);
    return why.empty();
  }

  // False when the url is refused (and reported).
  bool read_url(const Field& f, ValkeyConfig& v, ConnectionOptions& from_url) {
    static const char* kForms =
        "expected valkey://[user[:password]@]host[:port][/db], redis://..., valkeys://... or rediss://... (TLS), "
        "unix:///path/to/socket[?db=N] or embedded";
    if (!r_.string(f, v.url)) return false;
    if (v.url == "embedded") {
      v.embedded = true;
      return true;
    }
    // The URL may hold a password: name no part of it but a plain scheme.
    const std::size_t sep = v.url.find("://");
    static const std::regex kScheme("[A-Za-z][A-Za-z0-9+.-]*");
    if (sep == std::string::npos || !std::regex_match(v.url.substr(0, sep), kScheme)) {
      r_.error(f, kForms);
      return false;
    }
    try {
      from_url = parse_url(v.url);
      return true;
    } catch (const Error& e) {
      std::string why = e.what();
      const std::string prefix = e.op() + ": ";
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
      r_.error(f, why);
      return false;
    }
  }

  void read_password(const Mapping& m, bool url_has_password, ValkeyConfig& v) {
    const Field* env = m.get("password_env");
    const Field* file = m.get("password_file");
    if (env && !r_.string(*env, v.password_env)) env = nullptr;
    if (file && !r_.string(*file, v.password_file)) file = nullptr;
    if (env && v.password_env.empty()) env = nullptr;
    if (file && v.password_file.empty()) file = nullptr;
    if (env && file) {
      r_.error(*file, "give password_env or password_file, not both");
      return;
    }
    const Field* source = env ? env : file;
    if (source == nullptr) return;
    if (url_has_password) {
      r_.error(*source, "the url already holds a password; give it in one place (better here, out of the url)");
      return;
    }
    if (v.embedded) {
      r_.error(*source, kEmbeddedHasNoUsers);
      return;
    }
    if (env) {
      const char* value = std::getenv(v.password_env.c_str());
      if (value == nullptr) {
        r_.error(*env, "expected the name of a set environment variable, but " + v.password_env +
                           " is not set in emqd's environment");
      } else if (value[0] == '\0') {
        r_.error(*env, "the environment variable " + v.password_env + " is set but empty");
      } else {
        v.password = value;
      }
      return;
    }
    v.password_file = absolute_from(dir_, v.password_file);
    std::string why;
    if (!read_secret_file(v.password_file, v.password, why)) r_.error(*file, why);
  }

  void read_metrics(const Field& field, MetricsConfig& metrics) {
    Mapping m;
    if (!r_.mapping(field, keys_of("metrics"), m)) return;
    if (auto f = m.get("listen"); f && r_.string(*f, metrics.listen)) {
      std::string why = listen_problem(metrics.listen);
      if (!why.empty()) r_.error(*f, "expected host:port (127.0.0.1:9464, [::1]:9464) or \"\" for off, " + why);
    }
  }

  // "" when `listen` is "" or host:port, else what is wrong with it.
  static std::string listen_problem(const std::string& listen) {
    std::string why;
    return listen.empty() || parse_listen_address(listen, 1, why) ? "" : "but " + why;
  }

  void read_log(const Field& field, LogConfig& log) {
    Mapping m;
    if (!r_.mapping(field, keys_of("log"), m)) return;
    if (auto f = m.get("level")) r_.word(*f, {"trace", "debug", "info", "warn", "error", "critical", "off"}, log.level);
    if (auto f = m.get("format")) r_.word(*f, {"text", "json"}, log.format);
  }

  void read_reaper(const Field& field, ReaperConfig& reaper) {
    Mapping m;
    if (!r_.mapping(field, keys_of("reaper"), m)) return;
    if (auto f = m.get("interval_ms")) {
      r_.integer(*f, std::int64_t{10}, std::int64_t{3600000}, reaper.interval_ms,
                 "a tighter loop only loads the server");
    }
    if (auto f = m.get("batch")) r_.integer(*f, std::int64_t{1}, std::int64_t{100000}, reaper.batch);
  }

  void read_shutdown(const Field& field, ShutdownConfig& shutdown) {
    Mapping m;
    if (!r_.mapping(field, keys_of("shutdown"), m)) return;
    if (auto f = m.get("drain_timeout_s")) r_.number(*f, 0, 86400, shutdown.drain_timeout_s);
  }

  void read_defaults(const Field& field, QueueConfig& defaults) {
    Mapping m;
    if (!r_.mapping(field, keys_of("defaults"), m, misplaced_in_defaults())) return;
    read_policy(m, "defaults.backoff", defaults);
    read_handler_settings(m, defaults.handler);
  }

  // The keys a queue shares with defaults; each one present overrides.
  void read_policy(const Mapping& m, const std::string& backoff_section, QueueConfig& q) {
    if (auto f = m.get("concurrency")) r_.integer(*f, 1, 4096, q.concurrency);
    if (auto f = m.get("prefetch")) r_.integer(*f, 0, 4096, q.prefetch);
    if (auto f = m.get("lease_ms")) {
      r_.integer(*f, std::int64_t{100}, kDayMs, q.lease_ms,
                 "86400000 is 24 h, and a lease under 100 ms cannot be renewed in time");
    }
    if (auto f = m.get("max_attempts")) r_.integer(*f, std::int64_t{1}, std::int64_t{1000000}, q.max_attempts);
    if (auto f = m.get("backoff")) read_backoff(*f, backoff_section, q.backoff);
    if (auto f = m.get("keep_completed_s")) r_.integer(*f, std::int64_t{0}, kTenYearsS, q.keep_completed_s);
    if (auto f = m.get("keep_dead_s")) r_.integer(*f, std::int64_t{0}, kTenYearsS, q.keep_dead_s);
    if (auto f = m.get("poll_max_ms")) r_.integer(*f, std::int64_t{1}, std::int64_t{60000}, q.poll_max_ms);
  }

  // Key by key, so a queue that sets only `initial_ms` keeps the rest of
  // the defaults' backoff.
  void read_backoff(const Field& field, const std::string& section, BackoffPolicy& b) {
    Mapping m;
    if (!r_.mapping(field, keys_of(section), m)) return;
    if (auto f = m.get("initial_ms")) r_.integer(*f, std::int64_t{0}, kMonthMs, b.initial_ms);
    if (auto f = m.get("multiplier")) r_.number(*f, 1, 100, b.multiplier, "below 1 the delays would shrink");
    if (auto f = m.get("max_ms")) r_.integer(*f, std::int64_t{0}, kMonthMs, b.max_ms);
    if (auto f = m.get("jitter")) r_.number(*f, 0, 1, b.jitter, "it is the fraction of a delay taken off at random");
  }

  // The handler keys defaults may carry too.
  void read_handler_settings(const Mapping& m, HandlerConfig& h) {
    if (auto f = m.get("timeout_s")) r_.number(*f, 0, kMonthS, h.timeout_s, "0 means no limit");
    if (auto f = m.get("kill_grace_s")) r_.number(*f, 0, 3600, h.kill_grace_s);
    if (auto f = m.get("max_output_bytes")) {
      r_.integer(*f, std::int64_t{0}, std::int64_t{1} << 30, h.max_output_bytes, "1073741824 is 1 GiB");
    }
    if (auto f = m.get("permanent_exit_codes")) read_exit_codes(*f, h.permanent_exit_codes);
    if (auto f = m.get("inherit_env")) r_.boolean(*f, h.inherit_env);
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
    static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
    std::map<std::string, int> seen;
    for (auto it = field.value.begin(); it != field.value.end(); ++it) {
      const int line = it->first.Mark().line + 1;
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      const Field entry{field.key + "." + name, it->second, line};
      if (!std::regex_match(name, kName)) {
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
    if (!r_.mapping(item, keys_of("queues[]"), m, misplaced_in_queue())) return false;
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
    read_policy(m, "queues[].backoff", q);
    if (const Field* handler = m.get("handler")) {
      read_handler(*handler, q.handler);
    } else {
      r_.error(m.line, m.child("handler"),
               "missing; expected a mapping with type (exec, pool or plugin) and its command or path");
    }
    return true;
  }

  void read_handler(const Field& field, HandlerConfig& h) {
    Mapping m;
    if (!r_.mapping(field, keys_of("queues[].handler"), m, misplaced_in_handler())) return;
    if (field.value.IsNull()) {
      r_.error(field, "expected a mapping with type (exec, pool or plugin) and its command or path");
      return;
    }
    const Field* type = m.get("type");
    std::string word;
    if (type == nullptr) {
      r_.error(m.line, m.child("type"), "missing; expected exec, pool or plugin");
      return;
    }
    if (!r_.word(*type, {"exec", "pool", "plugin"}, word)) return;
    h.type = word == "exec"   ? HandlerConfig::Type::Exec
             : word == "pool" ? HandlerConfig::Type::Pool
                              : HandlerConfig::Type::Plugin;
    if (!only_keys_for(m, h.type, word)) return;

    read_handler_settings(m, h);
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
    if (auto f = m.get("max_jobs_per_process")) {
      r_.integer(*f, std::int64_t{0}, std::int64_t{1000000000}, h.max_jobs_per_process, "0 never recycles");
    }
  }

  // Reports each key that the kind does not read; false when there was one.
  bool only_keys_for(const Mapping& m, HandlerConfig::Type type, const std::string& word) {
    bool ok = true;
    for (const Field& f : m.fields) {
      const std::string name = f.key.substr(m.key.size() + 1);
      const auto& allowed = handler_keys(type);
      if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
      std::vector<std::string> kinds;
      for (auto [kind, kind_word] :
           {std::pair{HandlerConfig::Type::Exec, "exec"}, std::pair{HandlerConfig::Type::Pool, "pool"},
            std::pair{HandlerConfig::Type::Plugin, "plugin"}}) {
        const auto& keys = handler_keys(kind);
        if (std::find(keys.begin(), keys.end(), name) != keys.end()) kinds.push_back(kind_word);
      }
      std::string applies = kinds.empty() ? "none" : kinds.size() == 1 ? kinds[0] : kinds[0] + " and " + kinds[1];
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
    if (const Field* f = m.get("config")) {
      if (f->value.IsNull()) return;
      if (!f->value.IsMap()) {
        r_.error(*f, "expected a mapping (handed to the plugin as a JSON object), got " + describe_value(f->value));
        return;
      }
      bool ok = true;
      nlohmann::json j = to_json(*f, ok);
      if (!ok) return;
      try {
        h.plugin_config_json = j.dump();
      } catch (const nlohmann::json::exception&) {
        // YAML may carry bytes that are not UTF-8; JSON may not, and dump()
        // throws on them (found by fuzz/config_fuzz.cpp).
        r_.error(*f, "expected UTF-8 text (it is handed to the plugin as JSON), but a key or value holds other bytes");
      }
    }
  }

  // YAML as JSON, reading plain scalars as YAML 1.2 does (numbers, true,
  // false); quoted ones stay strings.
  nlohmann::json to_json(const Field& f, bool& ok) {
    const YAML::Node& n = f.value;
    if (n.IsNull()) return nullptr;
    if (n.IsScalar()) return scalar_json(n);
    if (n.IsSequence()) {
      nlohmann::json out = nlohmann::json::array();
      for (std::size_t i = 0; i < n.size(); ++i)
        out.push_back(to_json(Field{f.key + "[" + std::to_string(i) + "]", n[i], 0}, ok));
      return out;
    }
    nlohmann::json out = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) {
      const int line = it->first.Mark().line + 1;
      if (!it->first.IsScalar()) {
        r_.error(line, f.key, "expected plain key names (JSON object keys), got " + describe_value(it->first));
        ok = false;
        continue;
      }
      const std::string name = it->first.Scalar();
      if (out.contains(name)) {
        r_.error(line, f.key + "." + name, "duplicate key; keep one");
        ok = false;
        continue;
      }
      out[name] = to_json(Field{f.key + "." + name, it->second, line}, ok);
    }
    return out;
  }

  static nlohmann::json scalar_json(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;
    static const std::regex kInteger("[+-]?[0-9]+");
    static const std::regex kNumber(R"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?)");
    if (s == "true" || s == "false") return s == "true";
    if (std::regex_match(s, kInteger)) {
      errno = 0;
      const long long v = std::strtoll(s.c_str(), nullptr, 10);
      if (errno != ERANGE) return v;
    }
    if (std::regex_match(s, kNumber)) {
      const double v = std::strtod(s.c_str(), nullptr);
      if (std::isfinite(v)) return v;
    }
    return s;
  }
};

// Where each YAML document of a text starts: the mark of its first node
// (where an error about the document points), one entry per document.
struct DocumentMarks : YAML::EventHandler {
  std::vector<YAML::Mark> starts;  // OnDocumentStart, for spotting a parser that does not move
  std::vector<YAML::Mark> nodes;   // its first node, or its start when it is empty

  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    nodes.push_back(mark);
    first_node_seen_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark) {
    if (!first_node_seen_ && !nodes.empty()) nodes.back() = mark;
    first_node_seen_ = true;
  }
  bool first_node_seen_ = false;
};

// Counts the documents of `text` before anything is built from it. Not
// YAML::LoadAll: on a stray ',' outside [ ] or { } (",\n" is enough),
// yaml-cpp 0.7 hands out one empty document after another without moving
// on, and LoadAll collects them until memory runs out (found by
// fuzz/config_fuzz.cpp). A document that starts where the previous one did
// means the parser is stuck there. Returns false, having reported it.
bool count_documents(ConfigReader& r, const std::string& text, DocumentMarks& marks) {
  std::stringstream stream(text);
  YAML::Parser parser(stream);
  while (parser.HandleNextDocument(marks)) {
    const std::size_t n = marks.starts.size();
    if (n >= 2 && marks.starts[n - 1].pos == marks.starts[n - 2].pos) {
      const YAML::Mark& at = marks.starts[n - 1];
      const bool comma = at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size() && text[at.pos] == ',';
      r.error(at.line + 1, "(syntax)",
              "expected valid YAML: the parser cannot get past column " + std::to_string(at.column + 1) +
                  (comma ? " (a ',' outside [ ] or { }; quote the value if it starts with one)" : ""));
      return false;
    }
  }
  return true;
}

// Reads `path` into `root`; reports why not. Only a regular file or a pipe
// (`--config <(...)`) is read, and at most kMaxConfigBytes of it: a device
// such as /dev/zero would otherwise be read until memory runs out.
constexpr std::size_t kMaxConfigBytes = 4 << 20;

bool read_document(ConfigReader& r, const std::string& path, YAML::Node& root) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno) + " (see --config)");
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error(1, "(file)", "expected a YAML file, but this is a directory (see --config)");
    return false;
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    r.error(1, "(file)", "expected a YAML file, but this is a device or socket (see --config)");
    return false;
  }
  const std::string too_big = "expected a YAML file of at most " + std::to_string(kMaxConfigBytes >> 20) +
                              " MiB; this one is larger (see --config)";
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes) {
    r.error(1, "(file)", too_big);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno));
    return false;
  }
  std::string bytes(kMaxConfigBytes + 1, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) {
    r.error(1, "(file)", std::string("expected a readable YAML file: ") + std::strerror(errno));
    return false;
  }
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() > kMaxConfigBytes) {
    r.error(1, "(file)", too_big);
    return false;
  }
  DocumentMarks documents;
  try {
    if (!count_documents(r, bytes, documents)) return false;
    if (documents.nodes.size() == 1) root = YAML::Load(bytes);
  } catch (const YAML::Exception& e) {
    r.error(e.mark.line >= 0 ? e.mark.line + 1 : 1, "(syntax)", "expected valid YAML: " + e.msg);
    return false;
  }
  if (documents.nodes.empty()) {
    r.error(1, "(top)", "the file holds no settings; expected at least queues:");
    return false;
  }
  if (documents.nodes.size() > 1) {
    r.error(documents.nodes[1].line + 1, "(top)",
            "expected one YAML document, found " + std::to_string(documents.nodes.size()) +
                "; remove the --- separators");
    return false;
  }
  return true;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> errors)
    : std::runtime_error([&] {
        std::string text;
        for (const auto& e : errors) text += (text.empty() ? "" : "\n") + e;
        return text;
      }()),
      errors_(std::move(errors)) {}

Config load_config(const std::string& path) {
  ConfigReader reader(path);
  Config config;
  config.path = path;
  YAML::Node root;
  if (read_document(reader, path, root)) Loader(reader, directory_of(path)).load(root, config);
  if (reader.failed()) throw ConfigError(reader.errors());
  return config;
}

std::vector<std::string> known_config_keys() {
  std::vector<std::string> keys;
  for (const auto& section : key_sections()) {
    for (const auto& key : section.keys) keys.push_back(section.path.empty() ? key : section.path + "." + key);
  }
  return keys;
}

}  // namespace echomq::daemon
