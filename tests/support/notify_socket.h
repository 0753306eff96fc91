// The socket systemd listens on for a Type=notify service, bound in a
// temporary directory (or the abstract namespace) and named by
// NOTIFY_SOCKET, read back one datagram at a time as systemd reads it.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace echomq::test {

// The socket systemd listens on, and the environment it hands a service.
class NotifySocket {
 public:
  explicit NotifySocket(bool abstract = false) {
    char tmpl[] = "/tmp/emqd-notify-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    name_ = abstract ? "@emqd-test-" + std::to_string(::getpid()) : dir_ + "/notify";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name_.data(), name_.size());
    if (abstract) addr.sun_path[0] = '\0';
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      throw std::runtime_error("cannot bind " + name_ + ": " + std::strerror(errno));
    }
    ::setenv("NOTIFY_SOCKET", name_.c_str(), 1);
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
    std::filesystem::remove_all(dir_);
  }

  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // NOTIFY_SOCKET=... for a child's environment.
  std::string env() const { return "NOTIFY_SOCKET=" + name_; }

  // The next datagram, or nullopt if none comes within the deadline.
  std::optional<std::string> next(std::chrono::milliseconds deadline = std::chrono::milliseconds(2000)) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(deadline.count())) <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }

 private:
  std::string dir_;
  std::string name_;
  int fd_ = -1;
};

}  // namespace echomq::test
