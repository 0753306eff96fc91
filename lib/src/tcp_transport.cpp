// Connecting over TCP: every address the name resolves to, in turn, within
// the connect timeout; then no Nagle delay (a command is one write) and
// keepalive, so a server that vanished without a word is noticed.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "transport.h"

namespace echomq {

namespace {
struct AddrInfoDeleter {
  void operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }
};

// Probes after 15 s of silence, every 5 s, and gives up after 3 misses:
// a dead peer is found in about 30 s instead of the kernel's two hours.
void tune(const Socket& s) {
  const int on = 1, idle = 15, interval = 5, count = 3;
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  ::setsockopt(s.fd(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// 0 when connected, else the errno of the failure (ETIMEDOUT at the deadline).
int finish_connect(const Socket& s, Deadline deadline) {
  pollfd p{s.fd(), POLLOUT, 0};
  int n;
  do {
    n = ::poll(&p, 1, ms_left(deadline));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (n == 0) return ETIMEDOUT;
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}
}  // namespace

Socket connect_tcp(const ConnectionOptions& o, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found);
  if (rc != 0) throw_unreachable(o, false, ::gai_strerror(rc));
  std::unique_ptr<addrinfo, AddrInfoDeleter> owned(found);

  int err = EADDRNOTAVAIL;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd() < 0) {
      err = errno;
      continue;
    }
    err = ::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) err = finish_connect(s, deadline);
    if (err == 0) {
      tune(s);
      return s;
    }
    if (err == ETIMEDOUT) break;  // the time is spent: no other address gets any
  }
  throw_unreachable(o, err == ETIMEDOUT, std::strerror(err));
}

}  // namespace echomq
