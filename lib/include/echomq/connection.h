// One connection to the server over hiredis, owned: the context is freed
// with the object. Not thread-safe; give each thread its own.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/reply.h"
#include "echomq/url.h"

struct redisContext;

namespace echomq {

using Command = std::vector<std::string>;

// Commands written as RESP, the form every server reads, into one buffer:
// a caller's strings go out without being copied into a Command first.
class RespBuffer {
 public:
  void begin(std::size_t argc);  // the next command has argc arguments
  void arg(std::string_view a);
  void add(const Command& argv);
  std::size_t commands() const noexcept { return commands_; }
  std::string_view bytes() const noexcept { return out_; }
  void clear();

 private:
  std::string out_;
  std::size_t commands_ = 0;
};

class Connection {
 public:
  // Connects, then AUTH, SELECT and CLIENT SETNAME as the options ask.
  // Throws Error{Io|Timeout} when the server cannot be reached, Error{Reply}
  // when it refuses the login.
  static Connection open(const ConnectionOptions& options);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Sends one command and reads its reply. An error reply is returned as a
  // Reply of type Error; only a transport failure throws (and marks the
  // connection broken: it is never reused after that).
  Reply command(const Command& argv);
  // Sends every command, then reads one reply each: one round trip.
  std::vector<Reply> pipeline(const std::vector<Command>& commands);
  std::vector<Reply> pipeline(const RespBuffer& commands);

  // For subscribers: send without reading, and read with a deadline that
  // does not break the connection when nothing arrives in time.
  void send(const Command& argv);
  std::optional<Reply> read_for(std::chrono::milliseconds wait);

  bool broken() const noexcept { return broken_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const noexcept;
  };
  explicit Connection(std::unique_ptr<redisContext, ContextDeleter> ctx, std::string op_name);

  // Hands formatted commands to hiredis whole: hiredis 0.14's own
  // formatting (sdscatfmt) was 40 % of a producer's CPU and a quarter of
  // the claim loop's.
  void append(const Command* commands, std::size_t count);
  void append(const RespBuffer& commands);
  Reply read_reply();
  std::vector<Reply> read_replies(std::size_t count);
  [[noreturn]] void fail(const char* op);

  std::unique_ptr<redisContext, ContextDeleter> ctx_;
  std::string address_;  // redacted, for messages
  RespBuffer outbuf_;    // reused, so a busy connection formats without allocating
  bool broken_ = false;
};

}  // namespace echomq
