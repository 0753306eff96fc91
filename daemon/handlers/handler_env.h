// The environment a handler process sees. Scrubbed by default: the job's
// EMQ_* variables, PATH, LANG and the configured env, nothing else of the
// daemon's, whose environment holds its secrets (the Valkey password).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "handlers/handler.h"

namespace echomq::daemon {

class HandlerEnv {
 public:
  // daemon_env: the daemon's environment (environ), read once here so the
  // job threads never walk it while something else may setenv. drop_names
  // are never passed on from it, not even with inherit_env (the daemon
  // passes valkey.password_env's name), nor are EMQ_PASSWORD, EMQ_URL,
  // VALKEYCLI_AUTH and REDISCLI_AUTH. The configured env is the user's
  // explicit choice and is passed as written.
  HandlerEnv(const HandlerConfig& handler, const std::vector<std::string>& drop_names, const char* const* daemon_env);

  // The environment of one job's process as "NAME=value" strings, sorted
  // by name. EMQ_QUEUE, EMQ_JOB_ID, EMQ_ATTEMPT and EMQ_DEADLINE_MS win
  // over a configured variable of the same name: they describe the job;
  // so do TRACEPARENT and TRACESTATE when the job has a trace context.
  // emqd's own TRACEPARENT and TRACESTATE are never passed on.
  std::vector<std::string> for_job(const Job& job) const;

  // Without the job's variables (a pool's long-lived processes).
  const std::map<std::string, std::string>& base() const noexcept { return base_; }

 private:
  std::map<std::string, std::string> base_;
};

}  // namespace echomq::daemon
