// A tiny blocking HTTP client for the ops and emq web tests: real TCP sockets to the
// server under test, raw bytes out, the whole answer (to EOF) back.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace echomq::test {

struct HttpAnswer {
  int status = 0;                              // 0: no status line came back
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool closed = false;  // the server closed the connection (EOF or reset)
  std::string raw;      // the bytes as they came: headers repeated or not
};

// A connected socket, closed by the destructor.
class Client {
 public:
  explicit Client(int port, const char* host = "127.0.0.1") {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host, &addr.sin_addr);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error("cannot connect to port " + std::to_string(port));
    }
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may hang up first; the answer says why
      off += static_cast<std::size_t>(n);
    }
  }

  // Reads until the server closes or `deadline` passes.
  HttpAnswer read_all(std::chrono::milliseconds deadline = std::chrono::seconds(5)) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    std::string raw;
    HttpAnswer a;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        a.closed = true;
        break;
      }
      raw.append(buf, static_cast<std::size_t>(n));
    }
    parse(raw, a);
    a.raw = std::move(raw);
    return a;
  }

 private:
  static void parse(const std::string& raw, HttpAnswer& a) {
    const std::size_t end = raw.find("\r\n\r\n");
    if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return;
    a.status = std::stoi(raw.substr(9, 3));
    std::size_t pos = raw.find("\r\n") + 2;
    while (pos < end) {
      std::size_t eol = raw.find("\r\n", pos);
      std::string line = raw.substr(pos, eol - pos);
      std::size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::size_t v = line.find_first_not_of(' ', colon + 1);
      a.headers[name] = v == std::string::npos ? "" : line.substr(v);
      pos = eol + 2;
    }
    a.body = raw.substr(end + 4);
  }

  int fd_ = -1;
};

// One request, the whole answer.
inline HttpAnswer http_request(int port, const std::string& raw) {
  Client c(port);
  c.send(raw);
  return c.read_all();
}

inline HttpAnswer http_get(int port, const std::string& path) {
  return http_request(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                "\r\nUser-Agent: emqd-ops-test\r\n\r\n");
}

// Whether /metrics on `port` has `line`, whole, among its lines.
inline bool scrape_has(int port, const std::string& line) {
  return ("\n" + http_get(port, "/metrics").body).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace echomq::test
