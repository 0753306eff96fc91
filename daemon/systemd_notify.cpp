#include "systemd_notify.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "echomq/whole_number.h"
#include "process/fd.h"

namespace echomq::daemon {

SystemdNotify::SystemdNotify() {
  if (const char* s = std::getenv("NOTIFY_SOCKET")) socket_ = s;
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  const bool for_us = pid == nullptr || whole_number(pid) == static_cast<std::int64_t>(::getpid());
  const std::optional<std::int64_t> every_us =
      usec == nullptr ? std::nullopt : whole_number_in(usec, 1, std::numeric_limits<std::int64_t>::max());
  if (every_us && for_us) watchdog_ = std::chrono::milliseconds(*every_us / 1000 / 2);
}

void SystemdNotify::send(const std::string& message) {
  if (socket_.empty()) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof addr.sun_path) return;
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  // "@name" is an abstract socket: its first byte is NUL on the wire.
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size());
  Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd ||
      ::sendto(fd.get(), message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len) < 0) {
    spdlog::debug("systemd notify: cannot send to {}", socket_);
  }
}

void SystemdNotify::ready(const std::string& status) { send("READY=1\nSTATUS=" + status); }
void SystemdNotify::status(const std::string& status) { send("STATUS=" + status); }
void SystemdNotify::stopping(const std::string& status) { send("STOPPING=1\nSTATUS=" + status); }
void SystemdNotify::watchdog() { send("WATCHDOG=1"); }

}  // namespace echomq::daemon
