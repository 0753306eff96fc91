// What every emq command shares: where the server is, and the one command
// the command line chose. Each cmd_*.cpp adds its subcommand to the app and,
// when it is the one chosen, sets run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "echomq/jobs.h"
#include "echomq/url.h"

namespace echomq::cli {

inline constexpr const char* kDefaultUrl = "valkey://127.0.0.1:6379/0";
inline constexpr const char* kUrlEnv = "EMQ_URL";
inline constexpr const char* kPasswordEnv = "EMQ_PASSWORD";
inline constexpr const char* kExecutorEnv = "EMQ_EXECUTOR";

struct Tool {
  std::string url = kDefaultUrl;  // --url, else EMQ_URL, else the default
  // --tls-ca, --tls-cert, --tls-key, --tls-server-name (or EMQ_TLS_*): for
  // a valkeys:// or rediss:// URL.
  TlsOptions tls;
  ExecutorChoice executor = ExecutorChoice::Auto;  // --executor, else EMQ_EXECUTOR
  std::function<int()> run;                        // the chosen command; returns the exit code

  // The URL parsed, with the password from EMQ_PASSWORD when that is set
  // (it wins over one in the URL, so a URL can be shared without its
  // secret), the TLS files and the executor chosen. Throws Error{Invalid}
  // for a bad URL, or TLS files given with a plaintext one.
  ConnectionOptions options() const;
};

// Adds --url, the --tls-* options and --executor, each with its variable.
void add_server_options(CLI::App& app, Tool& tool);

// Every numeric option of emq is added through these: the whole text must
// be a number the type holds, else a usage error naming the option. (CLI11
// alone turned 99999999999999999999 into 2^63-1 without a word.)
CLI::Option* add_number_option(CLI::App* app, const std::string& name, std::int64_t& value,
                               const std::string& description);
CLI::Option* add_number_option(CLI::App* app, const std::string& name, double& value, const std::string& description);

// Pausing or limiting a name nobody uses is legal (a queue may be set up
// before its first daemon), but it is more often a typo: a note on stderr
// when q is not in {emq}:queues (emq pause, resume, limit).
void warn_if_unknown(Executor& x, const QueueKeys& q);

// Deletes every job of q in state (not active) through cancel, asking first
// unless yes, and prints the count: emq purge, and emq dead delete --all.
int purge_confirmed(Executor& x, const QueueKeys& q, JobState state, bool yes);

// All of stdin, byte for byte (a payload may hold NULs or any other
// byte); `what` names it in a hint on a terminal and in errors.
std::string read_stdin(const char* what);
// A whole file, byte for byte; Error{Invalid} naming `what` and the path
// when it cannot be opened.
std::string read_file(const std::string& path, const char* what);

// The QUEUE... positional (default: every queue in {emq}:queues) and --json
// of a listing command, which prints one JSON object per `json_item`.
void add_queue_list_options(CLI::App* sub, std::vector<std::string>& queues, bool& json, const std::string& json_item);

void add_enqueue(CLI::App& app, Tool& tool);
void add_flow(CLI::App& app, Tool& tool);  // flow enqueue, flow show
void add_stats(CLI::App& app, Tool& tool);
void add_inspect(CLI::App& app, Tool& tool);
void add_dead(CLI::App& app, Tool& tool);
void add_control(CLI::App& app, Tool& tool);  // pause, resume, cancel
void add_daemons(CLI::App& app, Tool& tool);  // daemons, daemons quiet|stop
void add_limit(CLI::App& app, Tool& tool);
void add_groups(CLI::App& app, Tool& tool);  // groups, group set|pause|resume
void add_jobs(CLI::App& app, Tool& tool);
void add_search(CLI::App& app, Tool& tool);
void add_purge(CLI::App& app, Tool& tool);
void add_promote(CLI::App& app, Tool& tool);
void add_wait(CLI::App& app, Tool& tool);
void add_events(CLI::App& app, Tool& tool);
void add_queues(CLI::App& app, Tool& tool);  // queues, forget
void add_web(CLI::App& app, Tool& tool);
void add_schedules(CLI::App& app, Tool& tool);  // schedules, schedules fire

}  // namespace echomq::cli
