#include "logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace echomq::daemon {

namespace {
// %v escaped for a JSON string: handler stderr lines can hold anything.
class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr char kHex[] = "0123456789abcdef";
    for (char ch : std::string_view(msg.payload.data(), msg.payload.size())) {
      unsigned char c = static_cast<unsigned char>(ch);
      switch (c) {
        case '"': dest.append(std::string_view("\\\"")); break;
        case '\\': dest.append(std::string_view("\\\\")); break;
        case '\n': dest.append(std::string_view("\\n")); break;
        case '\r': dest.append(std::string_view("\\r")); break;
        case '\t': dest.append(std::string_view("\\t")); break;
        default:
          if (c < 0x20) {
            const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            dest.append(esc, esc + sizeof esc);
          } else {
            dest.push_back(ch);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonEscapedMessage>(); }
};
}  // namespace

void setup_logging(const std::string& level, const std::string& format) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw std::invalid_argument("log level '" + level + "': use trace, debug, info, warn, error, critical or off");
  }
  auto logger = std::make_shared<spdlog::logger>("emqd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,"msg":"%*"})");
    logger->set_formatter(std::move(formatter));
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  } else {
    throw std::invalid_argument("log format '" + format + "': use text or json");
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace echomq::daemon
