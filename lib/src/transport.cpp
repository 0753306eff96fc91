// What the transports share: the owned socket, the blocking mode with the
// command timeout, the errors of a socket, and the choice of transport.
#include "transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "echomq/errors.h"

namespace echomq {

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

int ms_left(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 24 * 3600 * 1000));
}

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

void make_blocking(int fd, std::chrono::milliseconds command_timeout, const std::string& address) {
  const int flags = ::fcntl(fd, F_GETFL);
  bool ok = flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
  if (ok) {
    const timeval tv = to_timeval(command_timeout);
    ok = ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
  }
  if (!ok) {
    throw Error(ErrorKind::Io, "connect", "cannot set the command timeout on " + address + ": " + std::strerror(errno));
  }
}

void throw_unreachable(const ConnectionOptions& o, bool timed_out, const std::string& why) {
  throw Error(timed_out ? ErrorKind::Timeout : ErrorKind::Io, "connect",
              "cannot reach " + o.redacted() + ": " + why + "; is valkey-server running there?");
}

void throw_socket_error(const char* op, int err, const std::string& address) {
  if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT) {
    throw Error(ErrorKind::Timeout, op, "no answer from " + address + " within the command timeout");
  }
  throw Error(ErrorKind::Io, op, "lost the connection to " + address + ": " + std::strerror(err));
}

void throw_closed(const char* op, const std::string& address) {
  throw Error(ErrorKind::Io, op, "the server at " + address + " closed the connection");
}

std::unique_ptr<Transport> open_transport(const ConnectionOptions& o) {
  const Deadline deadline = std::chrono::steady_clock::now() + o.connect_timeout;
  Socket s = o.unix_path.empty() ? connect_tcp(o, deadline) : connect_unix(o);
  if (o.tls.enabled && o.unix_path.empty()) return tls_transport(std::move(s), o, deadline);
  make_blocking(s.fd(), o.command_timeout, o.redacted());
  return socket_transport(std::move(s), o.redacted());
}

}  // namespace echomq
