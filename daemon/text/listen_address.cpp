#include "text/listen_address.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {

// A name or an IPv4 address: letters, digits, dots and dashes, neither
// first nor last a dot or a dash.
bool plain_host(const std::string& h) {
  for (char c : h) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!ok) return false;
  }
  return h.front() != '.' && h.front() != '-' && h.back() != '.' && h.back() != '-';
}

}  // namespace

std::optional<ListenAddress> parse_listen_address(const std::string& text, int lowest_port, std::string& why) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string::npos) {
      why = "the [IPv6] address is not closed";
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      why = "there is no :port after ]";
      return std::nullopt;
    }
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      why = "there is no :port";
      return std::nullopt;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (!host.empty() && !plain_host(host)) {
      why = "the host is not an address or a host name";
      return std::nullopt;
    }
  }
  if (host.empty()) {
    why = "the host is missing (0.0.0.0 is every IPv4 address)";
    return std::nullopt;
  }
  const std::optional<int> number = port_number(port, lowest_port);
  if (!number) {
    why = "the port is not a number in " + std::to_string(lowest_port) + "..65535";
    return std::nullopt;
  }
  return ListenAddress{host, *number};
}

bool is_loopback_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  bool loopback = found != nullptr;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      loopback = loopback && (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      loopback = loopback && IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    } else {
      loopback = false;
    }
  }
  ::freeaddrinfo(found);
  return loopback;
}

}  // namespace echomq::daemon
