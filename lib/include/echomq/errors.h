// Errors of libechomq. One type, with a kind a caller branches on: whether
// to retry (Io, Timeout, ReadOnly), to give up on this call (Reply, Arg,
// Kind), or to stop the process (Wire, Invalid from the caller's own data).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace echomq {

enum class ErrorKind {
  Io,        // the connection failed or closed; reconnecting may help
  Timeout,   // the server did not answer within the command timeout
  ReadOnly,  // a replica (READONLY), refused writes, a cluster mid-change (TRYAGAIN); retry later
  Protocol,  // the server answered something this library cannot read
  Reply,     // the server refused the command (an error reply not below)
  Wire,      // EMQWIRE: {emq}:version names another wire
  Kind,      // EMQKIND: the id is not JOB-namespaced
  Arg,       // EMQARG: an argument is malformed
  Invalid,   // refused host-side: a bad queue name, job id, URL or lane
};

// The code word of the server's error reply an Error was made from, read
// once, by error_from_reply: a caller branches on it, never on the text.
// The kind says what to do; the code, what the server said.
enum class ReplyCode {
  None,       // not made from an error reply (a failed connection, a host-side refusal)
  EmqArg,     // EMQARG
  EmqKind,    // EMQKIND
  EmqWire,    // EMQWIRE
  WrongType,  // WRONGTYPE: a key holds another type than the call needs (it names no key)
  Other,      // any other word: the kind says whether a retry may help
};

const char* to_string(ErrorKind kind);
// Io, Timeout, ReadOnly: the same call may succeed later unchanged.
bool transient(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string op, const std::string& message);

  ErrorKind kind() const noexcept { return kind_; }
  // The operation that failed ("claim", "connect", ...).
  const std::string& op() const noexcept { return op_; }
  // True when the same call may succeed later without any change by the
  // caller: the server was unreachable, slow or read-only.
  bool transient() const noexcept;
  // None unless made by error_from_reply.
  ReplyCode code() const noexcept { return code_; }
  // The key the server's reply names right after its code word, as claim's
  // EMQARG for a broken limit or pause does ("EMQARG emq:{q}:meta
  // max_active must be ..."); "" when the next word is no key of emq/1
  // (a key of emq/1 holds a hash tag {...}).
  const std::string& key() const noexcept { return key_; }
  // The reply after its code word ("emq:{q}:meta max_active must be ...").
  const std::string& detail() const noexcept { return detail_; }

 private:
  friend Error error_from_reply(std::string op, std::string_view reply_text);

  ErrorKind kind_;
  std::string op_;
  ReplyCode code_ = ReplyCode::None;
  std::string key_;
  std::string detail_;
};

// Maps an error reply ("EMQKIND job id must ...", "READONLY ...", ...) onto
// an Error. The one place that reads the code word of a server error.
Error error_from_reply(std::string op, std::string_view reply_text);

}  // namespace echomq
