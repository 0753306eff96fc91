#include "web/origin.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>

#include "echomq/whole_number.h"
#include "text/lower_case.h"

namespace echomq::cli {

namespace {

bool is_loopback_name(const std::string& host) {
  if (host == "localhost") return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    in6_addr v6{};
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
  }
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

// "HOST[:PORT]" split at the port's colon, an IPv6 address keeping its
// brackets; false when the value has no such shape.
bool split_host_port(const std::string& value, std::string& host, std::string& port) {
  const std::size_t close = value.rfind(']');
  const std::size_t colon = value.rfind(':');
  if (!value.empty() && value[0] == '[') {
    if (close == std::string::npos) return false;
    host = value.substr(0, close + 1);
    if (close + 1 == value.size()) return true;
    if (value[close + 1] != ':') return false;
    port = value.substr(close + 2);
    return true;
  }
  host = value.substr(0, colon);
  if (colon != std::string::npos) port = value.substr(colon + 1);
  return host.find(':') == std::string::npos;
}

}  // namespace

bool is_loopback_host_header(const std::string& value, int port) {
  std::string host;
  std::string port_text = "80";
  if (!split_host_port(value, host, port_text) || !is_loopback_name(daemon::lower(host))) return false;
  return port_number(port_text) == port;
}

std::vector<std::string> served_origins(const std::string& listen_host, const std::string& bound_host, int port,
                                        bool loopback, const std::vector<std::string>& extra) {
  const std::string suffix = ":" + std::to_string(port);
  const std::string listened = listen_host.find(':') == std::string::npos ? listen_host : "[" + listen_host + "]";
  std::vector<std::string> hosts = {daemon::lower(listened), bound_host};
  if (loopback) hosts.push_back("localhost");
  std::vector<std::string> out;
  for (const std::string& h : hosts) {
    const std::string origin = "http://" + h + suffix;
    if (std::find(out.begin(), out.end(), origin) == out.end()) out.push_back(origin);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::string origin_problem(const std::string& origin) {
  const std::size_t scheme = origin.find("://");
  const std::string name = scheme == std::string::npos ? "" : origin.substr(0, scheme);
  if (name != "http" && name != "https") return "it does not begin with http:// or https://";
  const std::string rest = origin.substr(scheme + 3);
  if (rest.empty()) return "the host is missing";
  if (rest.find_first_of("/?#@") != std::string::npos) return "an origin is a scheme, a host and a port: no path";
  if (daemon::lower(origin) != origin) return "a browser sends it in lower case; write it so";
  return "";
}

}  // namespace echomq::cli
