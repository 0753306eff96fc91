// What the handler tests share: payloads of every byte value, where the
// example and test plugins are built, and a stopwatch.
#pragma once

#include <chrono>
#include <string>

namespace echomq::daemon::test_support {

// Bytes 0..255, `copies` times over: a payload no text framing survives.
inline std::string every_byte(int copies = 1) {
  std::string out;
  for (int i = 0; i < 256 * copies; ++i) out.push_back(static_cast<char>(i & 0xff));
  return out;
}

inline std::string example_plugin(const std::string& name) {
  return std::string(EMQ_LIB_DIR) + "/libemq_" + name + ".so";
}

inline std::string test_plugin(const std::string& name) {
  return std::string(EMQ_LIB_DIR) + "/test-plugins/lib" + name + ".so";
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace echomq::daemon::test_support
