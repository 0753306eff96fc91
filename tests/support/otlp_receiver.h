// A real OTLP/HTTP receiver for the tracing tests (otlp_receiver.py beside
// this file, run by Debian's python3): it decodes what an exporter sends
// with the protocol's own definitions and keeps every span it took, so a
// test reads them as a collector would have seen them. Started on a free
// loopback port in a private directory, stopped by the destructor.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace echomq::test {

class OtlpReceiver {
 public:
  enum class Mode { Accept, Refuse, Hang };

  explicit OtlpReceiver(Mode mode = Mode::Accept);
  ~OtlpReceiver();
  OtlpReceiver(const OtlpReceiver&) = delete;
  OtlpReceiver& operator=(const OtlpReceiver&) = delete;

  int port() const { return port_; }
  // The collector's base URL, as tracing.endpoint takes it.
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Every span taken so far, in arrival order (otlp_receiver.py's fields).
  std::vector<nlohmann::json> spans() const;
  // Every request, taken or not: method, path, headers, status, spans.
  std::vector<nlohmann::json> requests() const;
  // Waits until `count` spans have arrived; the spans then.
  std::vector<nlohmann::json> wait_spans(std::size_t count, std::chrono::milliseconds deadline) const;

 private:
  std::vector<nlohmann::json> lines(const std::string& file) const;

  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A loopback port nothing listens on (bound, then released): an absent
// collector, or one for emqd's /metrics.
int unused_loopback_port();

}  // namespace echomq::test
