// Plain bytes over a connected socket, TCP or unix: send and recv, with the
// command timeout on the socket (transport.h).
#include <sys/socket.h>

#include <cerrno>

#include "transport.h"

namespace echomq {

namespace {
class SocketTransport final : public Transport {
 public:
  SocketTransport(Socket s, std::string address) : socket_(std::move(s)), address_(std::move(address)) {}

  void write(std::string_view bytes) override {
    while (!bytes.empty()) {
      // MSG_NOSIGNAL: a server gone is an error here, not a SIGPIPE that
      // kills a process that did not ignore it.
      const ssize_t n = ::send(socket_.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_socket_error("send", errno, address_);
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  std::size_t read(char* buf, std::size_t size) override { return receive(buf, size, 0); }

  std::size_t read_ready(char* buf, std::size_t size) override { return receive(buf, size, MSG_DONTWAIT); }

  bool buffered() const override { return false; }
  int fd() const noexcept override { return socket_.fd(); }

 private:
  std::size_t receive(char* buf, std::size_t size, int flags) {
    while (true) {
      const ssize_t n = ::recv(socket_.fd(), buf, size, flags);
      if (n > 0) return static_cast<std::size_t>(n);
      if (n == 0) throw_closed("read", address_);
      if (errno == EINTR) continue;
      if ((flags & MSG_DONTWAIT) != 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
      throw_socket_error("read", errno, address_);
    }
  }

  Socket socket_;
  std::string address_;
};
}  // namespace

std::unique_ptr<Transport> socket_transport(Socket s, std::string address) {
  return std::make_unique<SocketTransport>(std::move(s), std::move(address));
}

}  // namespace echomq
