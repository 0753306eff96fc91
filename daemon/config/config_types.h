// The daemon's configuration as plain values, with DESIGN.md's defaults in
// place. config.cpp fills them from YAML and refuses anything else; the keys,
// their ranges and what each sets are the rows of config_schema.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "echomq/backoff.h"
#include "echomq/events.h"
#include "echomq/groups.h"
#include "echomq/limits.h"
#include "echomq/url.h"

namespace echomq::daemon {

struct HandlerConfig {
  enum class Type { Exec, Pool, Plugin };

  Type type = Type::Exec;
  std::vector<std::string> command;        // exec, pool: argv, run without a shell
  std::string path;                        // plugin: the shared library
  std::string plugin_config_json = "{}";   // plugin: the `config` mapping, as JSON text
  double timeout_s = 0;                    // 0: no limit (the lease still fences the job)
  double kill_grace_s = 5;                 // SIGTERM to SIGKILL
  std::map<std::string, std::string> env;  // added to the scrubbed environment
  std::string cwd;                         // empty: the daemon's
  bool inherit_env = false;                // pass the daemon's whole environment
  std::int64_t max_output_bytes = 1 << 20;
  std::vector<int> permanent_exit_codes = {65};  // EX_DATAERR
  std::int64_t max_jobs_per_process = 0;         // pool: 0 never recycles
};

// `groups:` of a queue: the default policy (the `*` field of emq:{q}:groups)
// and each named group's own, which replaces the default whole.
struct QueueGroups {
  GroupPolicy fallback;
  std::map<std::string, GroupPolicy> overrides;
  bool operator==(const QueueGroups& o) const { return fallback == o.fallback && overrides == o.overrides; }
};

struct QueueConfig {
  std::string name;
  int concurrency = 1;
  // Jobs claimed ahead of free slots, so a slot that ends one finds the next
  // without waiting for a round trip. 0 for jobs that take long: a job
  // claimed ahead waits behind running ones while another daemon may idle.
  int prefetch = 0;
  std::int64_t lease_ms = 30000;
  std::int64_t max_attempts = 5;
  BackoffPolicy backoff{1000, 2.0, 3600000, 0.2};
  std::int64_t keep_completed_s = 0;  // 0 deletes a completed row at once
  std::int64_t keep_dead_s = 604800;
  std::int64_t poll_max_ms = 100;
  // `limits:`, across every daemon of the queue: written to its meta at
  // start, what it leaves out is off. Absent: meta is left as it is (emq
  // limit may have set them).
  std::optional<QueueLimits> limits;
  // `groups:`, written to emq:{q}:groups at start through group_set; the
  // policies it does not name are deleted there. Absent: the hash is left
  // as it is (emq group set may have written it).
  std::optional<QueueGroups> groups;
  // `events:` the length of the queue's events stream, written to its meta
  // at start; 0 (`off`) deletes the field there.
  std::int64_t events = kDefaultEventsLength;
  HandlerConfig handler;
};

struct ValkeyConfig {
  std::string url = "valkey://127.0.0.1:6379/0";
  bool embedded = false;     // url: embedded
  std::string embedded_dir;  // state directory of the embedded server
  std::string username;
  std::string password_env;
  std::string password_file;
  std::string password;  // resolved from env or file; never logged
  std::int64_t connect_timeout_ms = 2000;
  std::int64_t command_timeout_ms = 5000;
  bool keyspace_events = false;
  bool require_noeviction = false;
  // valkey.tls: absolute paths, checked at load. `enabled` stays false here:
  // the url's scheme turns TLS on (Daemon::server_options).
  TlsOptions tls;
  ExecutorChoice executor = ExecutorChoice::Auto;  // valkey.executor
};

struct MetricsConfig {
  std::string listen = "127.0.0.1:9464";  // "" turns the endpoint off
};

struct LogConfig {
  std::string level = "info";   // trace debug info warn error critical off
  std::string format = "text";  // text | json
};

struct ReaperConfig {
  std::int64_t interval_ms = 1000;
  std::int64_t batch = 500;
};

struct ShutdownConfig {
  double drain_timeout_s = 30;
};

// The daemon's entry in the fleet registry (PROTOCOL.md, "Daemons").
struct DaemonConfig {
  std::string name;   // the host part of its id; "" is the host name
  double beat_s = 5;  // how often it beats
};

// One entry of `schedules:` (DESIGN.md): a job enqueued into `queue` at each
// tick of `cron` in `timezone`, or every `every_ms`.
struct ScheduleConfig {
  std::string name;
  std::string queue;
  std::string cron;           // as written; empty when every_ms is set
  std::int64_t every_ms = 0;  // 0 when cron is set
  std::string timezone = "UTC";
  std::string payload;
  std::int64_t lane = 0;
  bool skip_overlap = false;  // overlap: skip
  std::int64_t misfire_grace_ms = 60000;
  // unique: each fire's job carries this key (docs/protocol.md, "Unique
  // jobs"); "" for none. unique_mode "" is the wire's default (finished,
  // or window with unique_for).
  std::string unique;
  std::string unique_mode;
  std::int64_t unique_for_ms = 0;
  // group: each fire's job goes to this group (docs/protocol.md, "Groups");
  // "" for none.
  std::string group;
  int line = 0;  // where it is defined, for logs
};

// `tracing:` (docs/operations.md, "Tracing"): OpenTelemetry spans, one per
// job, exported over OTLP/HTTP. What the file leaves out comes from the
// standard OTEL_* variables, resolved at load so --check-config shows it.
struct TracingConfig {
  bool enabled = false;
  std::string url;           // where spans are posted, ".../v1/traces"; resolved at load when enabled
  std::string url_from;      // "tracing.endpoint", the OTEL_* variable, or "the default"
  double sample_ratio = 1;   // of the traces emqd starts (jobs with no sampled context)
  bool parent_based = true;  // a job's sampled context keeps its span whatever the ratio
  std::string sampler_from;  // "" (the file, or the default) or "OTEL_TRACES_SAMPLER"
  std::string service_name = "emqd";
  std::string headers_file;
  std::vector<std::pair<std::string, std::string>> headers;  // from headers_file; never logged
  std::int64_t max_queue_size = 2048;                        // spans waiting for export; past it they are dropped
  std::int64_t schedule_delay_ms = 5000;                     // how often a batch leaves
  std::int64_t max_export_batch_size = 512;                  // spans per request
  std::string disabled_by;                                   // "OTEL_SDK_DISABLED" when it turned enabled tracing off
};

struct Config {
  std::string path;  // the file it came from
  ValkeyConfig valkey;
  MetricsConfig metrics;
  LogConfig log;
  ReaperConfig reaper;
  ShutdownConfig shutdown;
  DaemonConfig daemon;
  TracingConfig tracing;
  std::vector<QueueConfig> queues;
  std::vector<ScheduleConfig> schedules;
};

}  // namespace echomq::daemon
