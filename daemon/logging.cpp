#include "logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <string_view>

#include "echomq/bytes.h"

namespace echomq::daemon {

namespace {
// Every message goes through here, whatever it carries (a job id or a
// handler's stderr line is anyone's bytes): one event stays one line, no
// control byte reaches the terminal or the journal, and a JSON line stays
// valid UTF-8. Control characters become \n \r \t or \u00XX (C0, DEL,
// C1), which JSON decodes back; a byte that is not UTF-8 becomes the text
// \xNN, which JSON has no escape for, so there its backslash is escaped.
enum class Dialect { Text, Json };

void append_escaped(std::string_view in, Dialect dialect, spdlog::memory_buf_t& dest) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool json = dialect == Dialect::Json;
  const std::string_view slash = json ? "\\\\" : "\\";  // the backslash of an escape JSON lacks
  while (!in.empty()) {
    const auto c = static_cast<unsigned char>(in[0]);
    const std::size_t len = utf8_char_length(in);
    if (len == 0) {  // not UTF-8
      dest.append(slash);
      const char esc[] = {'x', kHex[c >> 4], kHex[c & 15]};
      dest.append(esc, esc + sizeof esc);
      in.remove_prefix(1);
      continue;
    }
    // C1 controls arrive as C2 80..C2 9F.
    const bool c1 = len == 2 && c == 0xC2 && static_cast<unsigned char>(in[1]) < 0xA0;
    const unsigned code = c1 ? static_cast<unsigned char>(in[1]) : c;
    if (len == 1 || c1) {
      switch (code) {
        case '\n': dest.append(std::string_view("\\n")); break;
        case '\r': dest.append(std::string_view("\\r")); break;
        case '\t': dest.append(std::string_view("\\t")); break;
        case '"':
          if (json)
            dest.append(std::string_view("\\\""));
          else
            dest.push_back('"');
          break;
        case '\\':
          if (json)
            dest.append(std::string_view("\\\\"));
          else
            dest.push_back('\\');
          break;
        default:
          if (code < 0x20 || code >= 0x7F) {
            const char esc[] = {'\\', 'u', '0', '0', kHex[code >> 4], kHex[code & 15]};
            dest.append(esc, esc + sizeof esc);
          } else {
            dest.push_back(static_cast<char>(code));
          }
      }
      in.remove_prefix(len);
      continue;
    }
    dest.append(in.data(), in.data() + len);
    in.remove_prefix(len);
  }
}

// The trace id of the job this thread runs, "" for none (LogTraceScope).
// Plain chars: a thread_local std::string would allocate on the slots' threads.
thread_local char t_trace_id[33] = {};

template <Dialect D>
class TraceIdField : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (t_trace_id[0] == '\0') return;
    dest.append(std::string_view(D == Dialect::Json ? ",\"trace_id\":\"" : " trace_id="));
    dest.append(std::string_view(t_trace_id));
    if (D == Dialect::Json) dest.push_back('"');
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TraceIdField>(); }
};

template <Dialect D>
class EscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    append_escaped(std::string_view(msg.payload.data(), msg.payload.size()), D, dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessage>(); }
};
}  // namespace

// Only ids of 32 lower-case hex digits are kept: they go into a line unescaped.
LogTraceScope::LogTraceScope(std::string_view trace_id) {
  if (trace_id.size() != 32 || trace_id.find_first_not_of("0123456789abcdef") != std::string_view::npos) return;
  trace_id.copy(t_trace_id, 32);
  t_trace_id[32] = '\0';
}

LogTraceScope::~LogTraceScope() { t_trace_id[0] = '\0'; }

void setup_logging(const std::string& level, const std::string& format) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log level '" + level + "': use trace, debug, info, warn, error, critical or off");
  }
  auto logger = std::make_shared<spdlog::logger>("emqd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == "json") {
    formatter->add_flag<EscapedMessage<Dialect::Json>>('*');
    formatter->add_flag<TraceIdField<Dialect::Json>>('&').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,"msg":"%*"%&})");
  } else if (format == "text") {
    formatter->add_flag<EscapedMessage<Dialect::Text>>('*');
    formatter->add_flag<TraceIdField<Dialect::Text>>('&').set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %*%&");
  } else {
    throw std::invalid_argument("log format '" + format + "': use text or json");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace echomq::daemon
