// What a script (or a test) needs to talk to `emq web` over real sockets:
// a request with the page's Host, its JSON body, the token its page carries,
// and a queue name or id made safe for a path.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.h"

namespace echomq::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

inline HttpAnswer request(int port, const std::string& method, const std::string& path, const Headers& headers = {}) {
  std::string raw = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
  for (const auto& [k, v] : headers) raw += k + ": " + v + "\r\n";
  if (method == "POST") raw += "Content-Length: 0\r\n";
  return http_request(port, raw + "\r\n");
}

inline nlohmann::json body_of(const HttpAnswer& a) { return nlohmann::json::parse(a.body); }

// The token the page of this process carries, from its HTML.
inline std::string token_of(int port) {
  const HttpAnswer page = request(port, "GET", "/");
  const std::string marker = "name=\"emq-token\" content=\"";
  const std::size_t at = page.body.find(marker);
  if (at == std::string::npos) return "";
  const std::size_t start = at + marker.size();
  return page.body.substr(start, page.body.find('"', start) - start);
}

inline std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace echomq::test
