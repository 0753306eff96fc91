#include "signals.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <ctime>

namespace echomq::daemon {

namespace {
sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}
}  // namespace

void block_signals() {
  sigset_t set = watched();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

std::optional<Signal> wait_signal(std::chrono::milliseconds wait) {
  sigset_t set = watched();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(wait.count() / 1000);
  ts.tv_nsec = static_cast<long>((wait.count() % 1000) * 1000000);
  int sig = ::sigtimedwait(&set, nullptr, &ts);
  if (sig < 0) return std::nullopt;  // EAGAIN (timeout) or EINTR
  if (sig == SIGHUP) return Signal::Reload;
  spdlog::info("received {}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  return Signal::Stop;
}

}  // namespace echomq::daemon
