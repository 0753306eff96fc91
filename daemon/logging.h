// Logging setup: spdlog to stderr (journald and container runtimes collect
// it), as text or as one JSON object per line.
#pragma once

#include <string>
#include <string_view>

namespace echomq::daemon {

// While it lives, every line its thread logs ends with the job's trace id
// (text: " trace_id=<32 hex>"; json: a "trace_id" key), so that a log
// search by trace id finds a job's lines, its handler's stderr among them.
// A slot holds one around each traced job; an empty id changes nothing.
class LogTraceScope {
 public:
  explicit LogTraceScope(std::string_view trace_id);
  ~LogTraceScope();
  LogTraceScope(const LogTraceScope&) = delete;
  LogTraceScope& operator=(const LogTraceScope&) = delete;
};

// level: trace debug info warn error critical off; format: text | json.
// Throws std::invalid_argument for anything else.
void setup_logging(const std::string& level, const std::string& format);

}  // namespace echomq::daemon
