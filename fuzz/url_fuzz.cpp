// libFuzzer target: echomq::parse_url on any bytes. It either refuses with
// Error{Invalid} or returns options that hold together: a port a socket can
// use, a database number, a host a resolver could take, and a redacted form
// that owes nothing to the password.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "echomq/errors.h"
#include "echomq/url.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view url(reinterpret_cast<const char*>(data), size);
  try {
    const echomq::ConnectionOptions o = echomq::parse_url(url);
    if (o.unix_path.empty() && (o.port < 1 || o.port > 65535)) __builtin_trap();
    if (o.db < 0) __builtin_trap();
    // The redacted form does not depend on the password in any way.
    echomq::ConnectionOptions without = o;
    without.password.clear();
    if (o.redacted() != without.redacted()) __builtin_trap();
    // A host is something a resolver could take (or an IPv6 address).
    for (const char c : o.host) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == '/' || c == '@') __builtin_trap();
    }
  } catch (const echomq::Error& e) {
    if (e.kind() != echomq::ErrorKind::Invalid) __builtin_trap();
  }
  return 0;
}
