// The health verdict behind /healthz and the systemd watchdog. Healthy means
// the server answers and every claim loop has turned recently: a loop that
// stopped or hangs (say after a reconnect went wrong) makes the daemon
// unhealthy even though the process is alive.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace echomq::daemon {

class ClaimLoop;

struct HealthVerdict {
  bool healthy = true;
  std::string reason;  // "ok", or one line saying what is wrong and where
};

class Health {
 public:
  using Clock = std::chrono::steady_clock;

  struct Loop {
    std::string queue;
    std::function<Clock::time_point()> last_turn;
    std::chrono::milliseconds allowed;             // a turn older than this is a stall
    std::function<std::string()> handler_problem;  // "" while its handler can take jobs
    std::function<std::string()> claim_problem;    // "" while its claims are answered
  };

  // server_trouble: "" while the server answers and takes writes, else one
  // line saying what is wrong with it (the sampler knows).
  Health(std::vector<Loop> loops, std::function<std::string()> server_trouble);

  // A claim loop's watch: it turns at least once a second, but one turn may
  // wait out a server call (connect plus command timeout) and an idle poll.
  static Loop watch(const ClaimLoop& loop, std::chrono::milliseconds server_call_limit);

  // Every loop turning: what the systemd watchdog asks. A server outage is
  // not a reason to be killed: the daemon rides it out.
  HealthVerdict loops(Clock::time_point now = Clock::now()) const;
  // loops(), every handler able to take jobs, and the server answering:
  // what /healthz answers. A handler that cannot start is no reason for
  // the watchdog to restart the daemon, but it is one to page someone.
  HealthVerdict check(Clock::time_point now = Clock::now()) const;

 private:
  std::vector<Loop> loops_;
  std::function<std::string()> server_trouble_;
};

}  // namespace echomq::daemon
