#include "echomq/url.h"

#include <limits>

#include "echomq/errors.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {
[[noreturn]] void bad(std::string_view url, const std::string& why) {
  // The URL may hold a password: show only its scheme, and nothing of a
  // string that has none (it may be a password pasted in the wrong place).
  std::size_t sep = url.find("://");
  std::string shown = sep == std::string_view::npos ? "given" : "'" + std::string(url.substr(0, sep)) + "://'";
  throw Error(ErrorKind::Invalid, "url", "cannot use the " + shown + " URL: " + why);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) bad(url, "a % escape is cut short");
    int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) bad(url, "a % escape is not two hex digits");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

int parse_number(std::string_view url, std::string_view s, const char* what, int lo, int hi) {
  const std::optional<std::int64_t> value = whole_number_in(s, 0, std::numeric_limits<int>::max());
  if (!value) bad(url, std::string(what) + " must be a number");
  if (*value < lo || *value > hi) {
    bad(url, std::string(what) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return static_cast<int>(*value);
}

// Refuses a host no resolver could take: a space or control byte, one of
// / ? # @ [ ] %, or (outside brackets) a ':'. A URL mangled in a config file
// is then caught when it is loaded, not as a resolver error at every
// reconnect (found by fuzz/url_fuzz.cpp).
void check_host(std::string_view url, std::string_view host, bool bracketed) {
  for (const char ch : host) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == ':' && !bracketed) {
      bad(url, "a host with ':' is an IPv6 address; put it in brackets: valkey://[::1]:6379");
    }
    const bool odd = c <= 0x20 || c >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '@' || ch == '[' ||
                     ch == ']' || (ch == '%' && !bracketed);
    if (odd) bad(url, "the host holds a character no host name has (a space, a control byte, or / ? # @ [ ] %)");
  }
}

// Splits "user:password@rest" into the options; returns rest.
std::string_view take_userinfo(std::string_view url, std::string_view rest, ConnectionOptions& opts) {
  std::size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return rest;
  std::string_view info = rest.substr(0, at);
  std::size_t colon = info.find(':');
  opts.username = percent_decode(url, info.substr(0, colon));
  if (colon != std::string_view::npos) opts.password = percent_decode(url, info.substr(colon + 1));
  return rest.substr(at + 1);
}
}  // namespace

std::string ConnectionOptions::redacted() const {
  std::string user = username.empty() ? "" : username + "@";
  if (!unix_path.empty()) return "unix://" + user + unix_path + "?db=" + std::to_string(db);
  return std::string(tls.enabled ? "valkeys://" : "valkey://") + user + host + ":" + std::to_string(port) + "/" +
         std::to_string(db);
}

ConnectionOptions parse_url(std::string_view url) {
  ConnectionOptions opts;
  std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    bad(url, "expected valkey://host:port/db, redis://..., valkeys://... (TLS) or unix:///path");
  }
  std::string_view scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);

  if (scheme == "unix") {
    std::size_t query = rest.find('?');
    std::string_view params = query == std::string_view::npos ? "" : rest.substr(query + 1);
    rest = take_userinfo(url, rest.substr(0, query), opts);
    if (rest.empty() || rest[0] != '/') bad(url, "the socket path must be absolute (unix:///run/valkey.sock)");
    opts.unix_path = std::string(rest);
    while (!params.empty()) {
      std::size_t amp = params.find('&');
      std::string_view kv = params.substr(0, amp);
      if (kv.substr(0, 3) == "db=") {
        opts.db = parse_number(url, kv.substr(3), "db", 0, 65535);
      } else if (!kv.empty()) {
        bad(url, "unknown parameter '" + std::string(kv.substr(0, kv.find('='))) + "' (only db=N)");
      }
      params = amp == std::string_view::npos ? "" : params.substr(amp + 1);
    }
    return opts;
  }
  opts.tls.enabled = scheme == "valkeys" || scheme == "rediss";
  if (scheme != "valkey" && scheme != "redis" && !opts.tls.enabled) {
    bad(url, "unknown scheme; use valkey://, redis://, valkeys:// or rediss:// (TLS), or unix://");
  }

  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  authority = take_userinfo(url, authority, opts);

  std::string_view host = authority;
  const bool bracketed = !authority.empty() && authority[0] == '[';
  if (bracketed) {  // [::1]:6379
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) bad(url, "an IPv6 host needs a closing ]");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad(url, "expected :port after the IPv6 host");
      opts.port = parse_number(url, after.substr(1), "port", 1, 65535);
    }
  } else if (std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    opts.port = parse_number(url, authority.substr(colon + 1), "port", 1, 65535);
  }
  if (host.empty()) bad(url, "the host is missing");
  check_host(url, host, bracketed);
  opts.host = std::string(host);
  if (!path.empty()) opts.db = parse_number(url, path, "db", 0, 65535);
  return opts;
}

}  // namespace echomq
