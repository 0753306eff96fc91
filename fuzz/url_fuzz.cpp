// libFuzzer target: echomq::parse_url on any bytes. It either refuses with
// Error{Invalid} or returns options that hold together: a port a socket can
// use, a database number, and a redacted form that never shows the password.
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
    const std::string shown = o.redacted();
    // Only a password too short to be told apart from the rest may appear.
    if (o.password.size() >= 8 && shown.find(o.password) != std::string::npos &&
        o.host.find(o.password) == std::string::npos && o.unix_path.find(o.password) == std::string::npos &&
        o.username.find(o.password) == std::string::npos) {
      __builtin_trap();
    }
  } catch (const echomq::Error& e) {
    if (e.kind() != echomq::ErrorKind::Invalid) __builtin_trap();
  }
  return 0;
}
