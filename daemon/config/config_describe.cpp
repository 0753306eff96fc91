// describe(): the resolved configuration as `emqd --check-config` prints it.
// Stable line by line, so operators can diff two of them. It shows where a
// password comes from, never the password, and names env variables without
// their values (they carry secrets too).
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/config_schema.h"
#include "echomq/executor.h"
#include "echomq/url.h"

namespace echomq::daemon {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string on_off(bool v) { return v ? "on" : "off"; }

std::string address(const ValkeyConfig& v) {
  if (v.embedded) return "embedded valkey-server in " + v.embedded_dir;
  try {
    ConnectionOptions o = parse_url(v.url);
    if (!v.username.empty()) o.username = v.username;
    return o.redacted();
  } catch (const std::exception&) {
    return "(an invalid url)";  // load_config refuses these; a hand-built Config may not
  }
}

std::string password_source(const ValkeyConfig& v) {
  if (!v.password_env.empty()) return "from $" + v.password_env;
  if (!v.password_file.empty()) return "from " + v.password_file;
  if (!v.embedded) {
    try {
      if (!parse_url(v.url).password.empty()) return "in the url";
    } catch (const std::exception&) {
    }
  }
  return "none";
}

// "" without TLS; else what is verified and how the daemon identifies itself.
std::string tls_summary(const ValkeyConfig& v) {
  if (v.embedded) return "";
  try {
    const ConnectionOptions o = parse_url(v.url);
    if (!o.tls.enabled) return "";
    const TlsOptions& t = v.tls;
    return "verified against " + (t.ca_file.empty() ? std::string("the system's CA store") : t.ca_file) + " as " +
           (t.server_name.empty() ? o.host : t.server_name) + "; client certificate " +
           (t.cert_file.empty() ? std::string("none") : t.cert_file);
  } catch (const std::exception&) {
    return "";
  }
}

// One "label  value" line; labels are padded so the values line up.
void row(std::ostream& out, const std::string& label, const std::string& value) {
  constexpr std::size_t kWidth = 16;
  out << label << std::string(label.size() < kWidth ? kWidth - label.size() : 1, ' ') << value << "\n";
}

std::string ms(std::int64_t v) { return std::to_string(v) + " ms"; }
std::string seconds(double v) { return number(v) + " s"; }

// "default weight 1; acme weight 3, paused; written to the server at start"
std::string groups_text(const QueueGroups& g) {
  std::string t = "default " + echomq::describe(g.fallback);
  for (const auto& [name, p] : g.overrides) t += "; " + name + " " + echomq::describe(p);
  return t + "; written to the server at start";
}

void describe_handler(std::ostream& out, const HandlerConfig& h) {
  if (h.type == HandlerConfig::Type::Plugin) {
    row(out, "  handler", "plugin " + h.path);
    std::string keys;
    const nlohmann::json config = nlohmann::json::parse(h.plugin_config_json, nullptr, false);
    for (const auto& item : config.items()) keys += (keys.empty() ? "" : ", ") + item.key();
    row(out, "  config keys", keys.empty() ? "none" : keys);
    return;
  }
  // replace: an argument may hold bytes that are not UTF-8, and dump() would throw on them.
  const std::string argv = nlohmann::json(h.command).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  row(out, "  handler", std::string(to_string(h.type)) + " " + argv);
  row(out, "  timeout",
      h.timeout_s > 0 ? seconds(h.timeout_s) + ", then SIGTERM, SIGKILL after " + seconds(h.kill_grace_s)
                      : "none (the lease still fences the job)");
  row(out, "  cwd", h.cwd.empty() ? "emqd's" : h.cwd);
  std::string names;
  for (const auto& entry : h.env) names += (names.empty() ? "" : ", ") + entry.first;
  row(out, "  env",
      (h.inherit_env ? "emqd's whole environment" : "scrubbed (EMQ_*, PATH, LANG)") +
          (names.empty() ? "" : " + " + names));
  row(out, "  output", "up to " + std::to_string(h.max_output_bytes) + " bytes");
  if (h.type == HandlerConfig::Type::Exec) {
    std::string codes;
    for (int c : h.permanent_exit_codes) codes += (codes.empty() ? "" : ", ") + std::to_string(c);
    row(out, "  permanent", codes.empty() ? "no exit code" : "exit " + codes + " (dead at once)");
  } else {
    row(out, "  recycle",
        h.max_jobs_per_process > 0 ? "after " + std::to_string(h.max_jobs_per_process) + " jobs per process" : "never");
  }
}

void describe_schedule(std::ostream& out, const ScheduleConfig& s) {
  row(out, "schedule", s.name + " on " + s.queue);
  row(out, "  when", s.cron.empty() ? "every " + ms(s.every_ms) : "cron \"" + s.cron + "\" in " + s.timezone);
  row(out, "  overlap", s.skip_overlap ? "skip while its last job is unfinished" : "allow");
  row(out, "  grace", ms(s.misfire_grace_ms) + " to fire a missed tick");
  // The payload may carry what an operator would not paste: its size only.
  std::string job = std::to_string(s.payload.size()) + " bytes of payload, lane " + std::to_string(s.lane);
  if (!s.unique.empty()) {
    job += ", unique key " + s.unique + " (" +
           (s.unique_mode.empty() ? (s.unique_for_ms > 0 ? "window" : "finished") : s.unique_mode) +
           (s.unique_for_ms > 0 ? " " + std::to_string(s.unique_for_ms) + " ms" : "") + ")";
  }
  row(out, "  job", job);
}

// The headers show as a count and their file: names and values may both
// say more than an operator's terminal should.
void describe_tracing(std::ostream& out, const TracingConfig& t) {
  if (!t.enabled) {
    row(out, "tracing", t.disabled_by.empty() ? "off" : "off (" + t.disabled_by + "=true)");
    return;
  }
  row(out, "tracing", "spans over OTLP/HTTP to " + t.url + " (from " + t.url_from + "), as service " + t.service_name);
  const std::string ratio = number(t.sample_ratio) + (t.sampler_from.empty() ? "" : " (" + t.sampler_from + ")");
  row(out, "  sampling",
      t.parent_based ? "a job's sampled context is kept; " + ratio + " of the traces emqd starts"
                     : ratio + " of every job's traces, whatever its context");
  row(out, "  headers",
      t.headers.empty() ? "none from a file"
                        : std::to_string(t.headers.size()) + " from " + t.headers_file + " (not shown)");
  row(out, "  queue",
      "up to " + std::to_string(t.max_queue_size) + " spans, then dropped; a batch of up to " +
          std::to_string(t.max_export_batch_size) + " every " + ms(t.schedule_delay_ms));
}

}  // namespace

std::string describe(const Config& config) {
  std::ostringstream out;
  const ValkeyConfig& v = config.valkey;
  row(out, "configuration", config.path);
  row(out, "valkey", address(v));
  row(out, "  password", password_source(v));
  row(out, "  timeouts",
      "connect " + ms(v.connect_timeout_ms) + ", command " +
          (v.command_timeout_ms > 0 ? ms(v.command_timeout_ms) : "none"));
  if (const std::string tls = tls_summary(v); !tls.empty()) row(out, "  tls", tls);
  row(out, "  keyspace", "events " + on_off(v.keyspace_events));
  row(out, "  noeviction", v.require_noeviction ? "required" : "not checked");
  row(out, "  executor", to_string(v.executor));
  row(out, "metrics", config.metrics.listen.empty() ? "off" : config.metrics.listen);
  row(out, "log", config.log.level + ", " + config.log.format);
  row(out, "reaper",
      "every " + ms(config.reaper.interval_ms) + ", up to " + std::to_string(config.reaper.batch) + " jobs");
  row(out, "shutdown", "drain up to " + seconds(config.shutdown.drain_timeout_s));
  row(out, "daemon",
      (config.daemon.name.empty() ? std::string("named for the host") : "named " + config.daemon.name) +
          ", beating every " + seconds(config.daemon.beat_s));
  describe_tracing(out, config.tracing);
  for (const QueueConfig& q : config.queues) {
    out << "\n";
    row(out, "queue", q.name);
    row(out, "  concurrency", std::to_string(q.concurrency));
    if (q.prefetch > 0) row(out, "  prefetch", std::to_string(q.prefetch) + " claimed ahead");
    row(out, "  lease", ms(q.lease_ms));
    row(out, "  attempts", std::to_string(q.max_attempts));
    row(out, "  backoff",
        ms(q.backoff.initial_ms) + " x" + number(q.backoff.multiplier) + ", at most " + ms(q.backoff.max_ms) +
            ", jitter " + number(q.backoff.jitter));
    row(out, "  keep",
        "completed " + std::to_string(q.keep_completed_s) + " s, dead " + std::to_string(q.keep_dead_s) + " s");
    row(out, "  idle poll", "up to " + ms(q.poll_max_ms));
    row(out, "  limits",
        q.limits ? echomq::describe(*q.limits) + ", written to meta at start"
                 : "none in the config: meta's, if any (emq limit)");
    row(out, "  groups",
        q.groups ? groups_text(*q.groups) : "none in the config: the server's, if any (emq group set)");
    row(out, "  events",
        q.events > 0 ? "a stream of about " + std::to_string(q.events) + " entries, written to meta at start"
                     : "off (meta's field deleted at start)");
    describe_handler(out, q.handler);
  }
  for (const ScheduleConfig& s : config.schedules) {
    out << "\n";
    describe_schedule(out, s);
  }
  return out.str();
}

}  // namespace echomq::daemon
