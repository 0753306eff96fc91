// The `exec` kind: one process per job, run from argv without a shell, in
// its own process group. The payload goes to its stdin, its stdout (up to
// max_output_bytes) is the result, its stderr is logged line by line and
// its last 4 KiB are the error text; the exit status decides the verdict.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "handlers/handler.h"
#include "handlers/handler_env.h"

namespace echomq::daemon {

class ExecHandler : public Handler {
 public:
  struct Params {
    std::string queue;
    HandlerConfig handler;
    // Never passed on from the daemon's environment (password_env's name).
    std::vector<std::string> secret_env_names;
  };

  // Reads the daemon's environment once, here.
  explicit ExecHandler(Params params);

  // Throws std::runtime_error when the command cannot run at all (empty,
  // program missing or not executable, cwd missing).
  void start() override;
  Outcome run(const Job& job, const StopToken& stop) override;

 private:
  Params params_;
  HandlerEnv env_;
};

// secret_env_names: the daemon's variables a handler must never see, even
// with inherit_env (the daemon passes valkey.password_env's name).
std::unique_ptr<Handler> make_exec_handler(const QueueConfig& queue, std::vector<std::string> secret_env_names);

}  // namespace echomq::daemon
