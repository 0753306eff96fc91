// "host:port" or "[ipv6]:port", as metrics.listen and `emq web --listen`
// take it: one parser for the config check and the listener, so the two
// never disagree on what an address is.
#pragma once

#include <optional>
#include <string>

namespace echomq::daemon {

struct ListenAddress {
  std::string host;  // without the brackets of an IPv6 address
  int port = 0;
};

// The address, or nullopt with `why` set to what is wrong, worded to follow
// "expected host:port, but ": "the port is not a number in 1..65535".
// lowest_port is 0 where port 0 means "pick a free one", else 1.
std::optional<ListenAddress> parse_listen_address(const std::string& text, int lowest_port, std::string& why);

// Whether every address the host resolves to is a loopback one
// (127.0.0.0/8, ::1); false when it does not resolve.
bool is_loopback_host(const std::string& host);

}  // namespace echomq::daemon
