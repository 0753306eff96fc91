#include "handlers/handler_env.h"

#include <cstring>

namespace echomq::daemon {
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
constexpr const char* kDefaultLang = "C.UTF-8";
// Where the password sits besides password_env: emq's (EMQ_URL may hold it
// in its user-info) and valkey-cli's / redis-cli's.
constexpr const char* kServerSecrets[] = {"EMQ_PASSWORD", "EMQ_URL", "VALKEYCLI_AUTH", "REDISCLI_AUTH"};
// The trace context emqd itself was started in is no job's: a handler
// whose job has none must not nest its spans under it.
constexpr const char* kTraceCarrier[] = {"TRACEPARENT", "TRACESTATE"};

std::map<std::string, std::string> parse_environ(const char* const* env) {
  std::map<std::string, std::string> vars;
  for (; env != nullptr && *env != nullptr; ++env) {
    const char* eq = std::strchr(*env, '=');
    if (eq == nullptr || eq == *env) continue;
    vars.emplace(std::string(*env, eq), std::string(eq + 1));
  }
  return vars;
}

std::string value_or(const std::map<std::string, std::string>& vars, const std::string& name, const char* fallback) {
  auto it = vars.find(name);
  return it == vars.end() || it->second.empty() ? fallback : it->second;
}

}  // namespace

HandlerEnv::HandlerEnv(const HandlerConfig& handler, const std::vector<std::string>& drop_names,
                       const char* const* daemon_env) {
  std::map<std::string, std::string> daemon = parse_environ(daemon_env);
  for (const auto& name : drop_names) daemon.erase(name);
  for (const char* name : kServerSecrets) daemon.erase(name);
  for (const char* name : kTraceCarrier) daemon.erase(name);

  if (handler.inherit_env) base_ = daemon;
  base_["PATH"] = value_or(daemon, "PATH", kDefaultPath);
  base_["LANG"] = value_or(daemon, "LANG", kDefaultLang);
  for (const auto& [name, value] : handler.env) base_[name] = value;
}

std::vector<std::string> HandlerEnv::for_job(const Job& job) const {
  std::map<std::string, std::string> vars = base_;
  vars["EMQ_QUEUE"] = job.queue;
  vars["EMQ_JOB_ID"] = job.id;
  vars["EMQ_ATTEMPT"] = std::to_string(job.attempt);
  vars["EMQ_DEADLINE_MS"] = std::to_string(job.deadline_ms);
  // OpenTelemetry's environment carrier: the job's span, for the handler's
  // own spans to nest under (docs/handlers.md, "Traces").
  if (!job.traceparent.empty()) {
    vars["TRACEPARENT"] = job.traceparent;
    if (job.tracestate.empty()) {
      vars.erase("TRACESTATE");
    } else {
      vars["TRACESTATE"] = job.tracestate;
    }
  }

  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

}  // namespace echomq::daemon
