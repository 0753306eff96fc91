#include "signals.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <ctime>

namespace echomq::daemon {

namespace {
std::atomic<bool> quiet_requested{false};

sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  // Quiet, not stopped: a terminal's ^Z or `kill -TSTP` before a deploy.
  sigaddset(&set, SIGTSTP);
  // Taken and logged, never acted on: their default action ends the process
  // with no drain, and a stray `kill -USR1` must not cost running jobs.
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  return set;
}
}  // namespace

void block_signals() {
  sigset_t set = watched();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

bool wait_stop_signal(std::chrono::milliseconds wait) {
  sigset_t set = watched();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(wait.count() / 1000);
  ts.tv_nsec = static_cast<long>((wait.count() % 1000) * 1000000);
  int sig = ::sigtimedwait(&set, nullptr, &ts);
  if (sig < 0) return false;  // EAGAIN (timeout) or EINTR
  if (sig == SIGHUP) {
    spdlog::warn("received SIGHUP: emqd does not reload its configuration; restart it to apply changes");
    return false;
  }
  if (sig == SIGTSTP) {
    spdlog::info("received SIGTSTP: going quiet (no more claims; running jobs finish; SIGTERM stops)");
    quiet_requested.store(true);
    return false;
  }
  if (sig == SIGUSR1 || sig == SIGUSR2) {
    spdlog::warn("received {}: emqd takes no action on it (SIGTERM stops it)", sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
    return false;
  }
  spdlog::info("received {}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  return true;
}

bool take_quiet_request() { return quiet_requested.exchange(false); }

}  // namespace echomq::daemon
