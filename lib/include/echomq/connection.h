// One connection to the server, owned: closed with the object. Commands go
// out as RESP through a transport (TCP, unix socket or TLS: transport.h)
// and replies come back through hiredis' reader. Not thread-safe; give each
// thread its own.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/reply.h"
#include "echomq/url.h"

struct redisReader;

namespace echomq {

class Transport;

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
  // Connects (over TLS for valkeys://), then AUTH, SELECT and CLIENT SETNAME as the options ask.
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
  // Without reading or waiting: whether the server has closed its end (or
  // sent what nobody asked for, which it never does between replies). For
  // a connection with no reply outstanding; true once broken.
  bool closed_by_server() const noexcept;

 private:
  struct ReaderDeleter {
    void operator()(redisReader* r) const noexcept;
  };
  Connection(std::unique_ptr<Transport> transport, std::string address);

  // Commands are formatted here, not by hiredis: hiredis 0.14's own
  // formatting (sdscatfmt) was 40 % of a producer's CPU and a quarter of
  // the claim loop's. They go out in one write, from the caller's buffer.
  void write(const Command* commands, std::size_t count);
  void write(const RespBuffer& commands);
  Reply read_reply();
  std::vector<Reply> read_replies(std::size_t count);
  std::optional<Reply> take_reply();  // a whole reply already read, if any
  void feed(std::size_t n);           // n bytes of inbuf_ to the reader
  [[noreturn]] void fail_protocol();

  std::unique_ptr<Transport> transport_;
  std::unique_ptr<redisReader, ReaderDeleter> reader_;
  std::string address_;            // redacted, for messages
  RespBuffer outbuf_;              // reused, so a busy connection formats without allocating
  std::unique_ptr<char[]> inbuf_;  // what one read takes in
  bool broken_ = false;
};

}  // namespace echomq
