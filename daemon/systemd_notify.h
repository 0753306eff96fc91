// The systemd notify protocol, spoken directly: one datagram per message to
// $NOTIFY_SOCKET. A no-op when not started by systemd.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace echomq::daemon {

class SystemdNotify {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC (and WATCHDOG_PID) once.
  SystemdNotify();

  bool enabled() const { return !socket_.empty(); }
  void ready(const std::string& status);
  void status(const std::string& status);
  void stopping(const std::string& status);
  void watchdog();
  // Half the watchdog timeout, when systemd asked for pings.
  std::optional<std::chrono::milliseconds> watchdog_interval() const { return watchdog_; }

 private:
  void send(const std::string& message);

  std::string socket_;
  std::optional<std::chrono::milliseconds> watchdog_;
};

}  // namespace echomq::daemon
