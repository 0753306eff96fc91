// Connecting to a unix socket. connect() on one only waits when the
// server's backlog is full, and then for at most SO_SNDTIMEO: the connect
// timeout.
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "transport.h"

namespace echomq {

Socket connect_unix(const ConnectionOptions& o) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (o.unix_path.size() >= sizeof addr.sun_path) {
    throw_unreachable(
        o, false,
        "the socket path is longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes; use a shorter one");
  }
  std::memcpy(addr.sun_path, o.unix_path.data(), o.unix_path.size());

  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int err = s.fd() < 0 ? errno : 0;
  if (err == 0) {
    const timeval tv = to_timeval(o.connect_timeout);
    ::setsockopt(s.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
  }
  if (err != 0) {
    throw_unreachable(o, err == EAGAIN || err == ETIMEDOUT || err == EINPROGRESS, std::strerror(err));
  }
  return s;
}

}  // namespace echomq
