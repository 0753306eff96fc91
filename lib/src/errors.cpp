#include "echomq/errors.h"

namespace echomq {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Io: return "io";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::ReadOnly: return "readonly";
    case ErrorKind::Protocol: return "protocol";
    case ErrorKind::Reply: return "reply";
    case ErrorKind::Wire: return "wire";
    case ErrorKind::Kind: return "kind";
    case ErrorKind::Arg: return "arg";
    case ErrorKind::Invalid: return "invalid";
  }
  return "unknown";
}

Error::Error(ErrorKind kind, std::string op, const std::string& message)
    : std::runtime_error(op.empty() ? message : op + ": " + message), kind_(kind), op_(std::move(op)) {}

bool transient(ErrorKind kind) noexcept {
  return kind == ErrorKind::Io || kind == ErrorKind::Timeout || kind == ErrorKind::ReadOnly;
}

bool Error::transient() const noexcept { return echomq::transient(kind_); }

namespace {
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

ErrorKind kind_of(std::string_view text) {
  if (starts_with(text, "EMQKIND")) return ErrorKind::Kind;
  if (starts_with(text, "EMQARG")) return ErrorKind::Arg;
  if (starts_with(text, "EMQWIRE")) return ErrorKind::Wire;
  // A replica, a server that lost its disk (MISCONF), one still loading
  // its data set, or a primary short of the replicas min-replicas-to-write
  // asks for (NOREPLICAS) will accept the same write later: the caller
  // should wait. So will a cluster between two states: a slot being
  // migrated (TRYAGAIN), a slot without a primary yet (CLUSTERDOWN), or a
  // redirection still standing after the one retry the router gives it.
  if (starts_with(text, "TRYAGAIN") || starts_with(text, "CLUSTERDOWN") || starts_with(text, "MOVED") ||
      starts_with(text, "ASK ")) {
    return ErrorKind::ReadOnly;
  }
  if (starts_with(text, "READONLY") || starts_with(text, "MISCONF") || starts_with(text, "LOADING") ||
      starts_with(text, "MASTERDOWN") || starts_with(text, "BUSY") || starts_with(text, "NOREPLICAS")) {
    return ErrorKind::ReadOnly;
  }
  return ErrorKind::Reply;
}

ReplyCode code_of(std::string_view word) {
  if (word == "EMQARG") return ReplyCode::EmqArg;
  if (word == "EMQKIND") return ReplyCode::EmqKind;
  if (word == "EMQWIRE") return ReplyCode::EmqWire;
  if (word == "WRONGTYPE") return ReplyCode::WrongType;
  return ReplyCode::Other;
}
}  // namespace

Error error_from_reply(std::string op, std::string_view text) {
  Error e(kind_of(text), std::move(op), std::string(text));
  const std::size_t space = text.find(' ');
  e.code_ = code_of(text.substr(0, space));
  if (space == std::string_view::npos) return e;
  e.detail_ = std::string(text.substr(space + 1));
  const std::string_view next = std::string_view(e.detail_).substr(0, e.detail_.find(' '));
  if (next.find('{') != std::string_view::npos && next.find('}') != std::string_view::npos) e.key_ = std::string(next);
  return e;
}

}  // namespace echomq
