// The bytes under a Connection: one transport per kind of link, each in its
// own file. The Connection writes RESP through one and feeds what it reads
// to hiredis' reader; the transport knows nothing of RESP.
//
//   socket_transport.cpp  plain bytes over a connected socket (TCP, unix)
//   tcp_transport.cpp     connecting over TCP, with keepalive
//   unix_transport.cpp    connecting to a unix socket
//   tls_transport.cpp     TLS over TCP, with OpenSSL
//
// A transport is blocking, with the command timeout on the socket itself
// (SO_RCVTIMEO, SO_SNDTIMEO): a round trip is then one write and one read,
// with no poll between. Failures throw Error{Io|Timeout} naming the server.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "echomq/url.h"

namespace echomq {

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends every byte, or throws.
  virtual void write(std::string_view bytes) = 0;
  // Reads what has arrived, 1 to size bytes, waiting for the first up to
  // the command timeout.
  virtual std::size_t read(char* buf, std::size_t size) = 0;
  // The same without waiting: 0 when nothing can be read yet. A failure
  // still throws.
  virtual std::size_t read_ready(char* buf, std::size_t size) = 0;
  // True when bytes were received that read() returns without the socket
  // becoming readable again (TLS decrypts whole records).
  virtual bool buffered() const = 0;
  virtual int fd() const noexcept = 0;
};

// The transport the options ask for, connected (and the TLS handshake done)
// within options.connect_timeout.
std::unique_ptr<Transport> open_transport(const ConnectionOptions& options);

// An owned file descriptor, closed with the object.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) noexcept : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

using Deadline = std::chrono::steady_clock::time_point;

// Milliseconds left until the deadline, for poll(): 0 once it has passed.
int ms_left(Deadline deadline);

// Connected, and still non-blocking (the TLS handshake is driven by poll);
// make_blocking() turns it into what the transports read and write.
Socket connect_tcp(const ConnectionOptions& options, Deadline deadline);
Socket connect_unix(const ConnectionOptions& options);

// A duration as the timeval SO_RCVTIMEO and SO_SNDTIMEO take (0: none).
timeval to_timeval(std::chrono::milliseconds ms);
// Blocking, with the command timeout on every read and write (0: none).
void make_blocking(int fd, std::chrono::milliseconds command_timeout, const std::string& address);

// Plain bytes over a connected socket: TCP and unix sockets alike.
std::unique_ptr<Transport> socket_transport(Socket s, std::string address);
std::unique_ptr<Transport> tls_transport(Socket s, const ConnectionOptions& options, Deadline deadline);
// An IPv4 or IPv6 address rather than a name: TLS verifies it against the
// certificate's IP entries and sends no SNI for it.
bool is_ip_address(const std::string& name);

// Throws Error{Io|Timeout} "cannot reach <server>: <why>; is valkey-server
// running there?".
[[noreturn]] void throw_unreachable(const ConnectionOptions& options, bool timed_out, const std::string& why);
// Throws the Error a failed read or write of the socket means: Timeout
// when the command timeout passed, Io otherwise. err is errno.
[[noreturn]] void throw_socket_error(const char* op, int err, const std::string& address);
// The server closed its end.
[[noreturn]] void throw_closed(const char* op, const std::string& address);

}  // namespace echomq
