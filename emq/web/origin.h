// Who the page of `emq web` is: the Host a loopback page answers to and the
// origins an action may come from. Both are compared with what the server
// itself serves, never with what a request says about itself: a page of
// another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its
// own name as Host and as Origin.
#pragma once

#include <string>
#include <vector>

namespace echomq::cli {

// A Host header's value ("127.0.0.1:9465", "[::1]:9465", "localhost") that
// names a loopback address and the port the page is served on:
//   - localhost (any case);
//   - a full dotted quad in 127.0.0.0/8, as inet_pton reads it (four
//     decimal parts, no leading zeros: "127.1", "0x7f.0.0.1" are not);
//   - [::1], bracketed, in any IPv6 spelling of it.
// The port must be given and equal `port`, except that no port means 80.
// Anything else is refused: "127.0.0.1.evil.example", "127.evil",
// "127.0.0.1@evil.com", a wrong port, userinfo, a path.
bool is_loopback_host_header(const std::string& value, int port);

// The origins the page is served at: "http://HOST:PORT" for the host it
// listens on (as --listen names it) and the address it is bound to
// ("127.0.0.1", "[::1]"), plus "localhost" when that is loopback, plus
// each extra one (--origin) as given. HOST is lower-case.
std::vector<std::string> served_origins(const std::string& listen_host, const std::string& bound_host, int port,
                                        bool loopback, const std::vector<std::string>& extra);

// "" when `origin` is one --origin may name ("http://emq.example:8080",
// "https://ops.example"), else what is wrong with it.
std::string origin_problem(const std::string& origin);

}  // namespace echomq::cli
