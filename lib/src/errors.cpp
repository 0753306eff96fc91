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
}  // namespace

Error error_from_reply(std::string op, std::string_view text) {
  const std::string message(text);
  if (starts_with(text, "EMQKIND")) return Error(ErrorKind::Kind, std::move(op), message);
  if (starts_with(text, "EMQARG")) return Error(ErrorKind::Arg, std::move(op), message);
  if (starts_with(text, "EMQWIRE")) return Error(ErrorKind::Wire, std::move(op), message);
  // A replica, a server that lost its disk (MISCONF), one still loading
  // its data set, or a primary short of the replicas min-replicas-to-write
  // asks for (NOREPLICAS) will accept the same write later: the caller
  // should wait. So will a cluster between two states: a slot being
  // migrated (TRYAGAIN), a slot without a primary yet (CLUSTERDOWN), or a
  // redirection still standing after the one retry the router gives it.
  if (starts_with(text, "TRYAGAIN") || starts_with(text, "CLUSTERDOWN") || starts_with(text, "MOVED") ||
      starts_with(text, "ASK ")) {
    return Error(ErrorKind::ReadOnly, std::move(op), message);
  }
  if (starts_with(text, "READONLY") || starts_with(text, "MISCONF") || starts_with(text, "LOADING") ||
      starts_with(text, "MASTERDOWN") || starts_with(text, "BUSY") || starts_with(text, "NOREPLICAS")) {
    return Error(ErrorKind::ReadOnly, std::move(op), message);
  }
  return Error(ErrorKind::Reply, std::move(op), message);
}

}  // namespace echomq
