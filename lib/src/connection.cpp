#include "echomq/connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "echomq/errors.h"

namespace echomq {

namespace {
timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::Array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = Reply::Type::Nil;
  }
  return out;
}

struct ReplyDeleter {
  void operator()(void* r) const noexcept { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<void, ReplyDeleter>;

void expect_ok(Connection& c, const Command& argv, const char* what) {
  Reply r = c.command(argv);
  if (r.is_error()) throw error_from_reply(what, r.str);
}
}  // namespace

namespace {
// "*3\r\n" or "$12\r\n": a type byte, a decimal, CRLF, written with one append.
void append_header(char type, std::size_t n, std::string& out) {
  char head[24];
  head[0] = type;
  char* end = std::to_chars(head + 1, head + sizeof head - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out.append(head, static_cast<std::size_t>(end - head));
}
}  // namespace

void RespBuffer::begin(std::size_t argc) {
  append_header('*', argc, out_);
  ++commands_;
}

void RespBuffer::arg(std::string_view a) {
  append_header('$', a.size(), out_);
  out_.append(a.data(), a.size());
  out_.append("\r\n", 2);
}

void RespBuffer::add(const Command& argv) {
  begin(argv.size());
  for (const std::string& a : argv) arg(a);
}

void RespBuffer::clear() {
  constexpr std::size_t kKeep = 1 << 20;  // a big payload's buffer is not kept
  if (out_.capacity() > kKeep) {
    std::string().swap(out_);
  } else {
    out_.clear();
  }
  commands_ = 0;
}

void Connection::ContextDeleter::operator()(redisContext* c) const noexcept { redisFree(c); }

Connection::Connection(std::unique_ptr<redisContext, ContextDeleter> ctx, std::string address)
    : ctx_(std::move(ctx)), address_(std::move(address)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::open(const ConnectionOptions& o) {
  const timeval connect_tv = to_timeval(o.connect_timeout);
  redisContext* raw = o.unix_path.empty() ? redisConnectWithTimeout(o.host.c_str(), o.port, connect_tv)
                                          : redisConnectUnixWithTimeout(o.unix_path.c_str(), connect_tv);
  if (raw == nullptr) throw Error(ErrorKind::Io, "connect", "out of memory creating a connection");
  std::unique_ptr<redisContext, ContextDeleter> ctx(raw);
  if (ctx->err) {
    bool timed_out = ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT || errno == EINPROGRESS);
    throw Error(timed_out ? ErrorKind::Timeout : ErrorKind::Io, "connect",
                "cannot reach " + o.redacted() + ": " + ctx->errstr + "; is valkey-server running there?");
  }
  if (o.command_timeout.count() > 0 && redisSetTimeout(ctx.get(), to_timeval(o.command_timeout)) != REDIS_OK) {
    throw Error(ErrorKind::Io, "connect", "cannot set the command timeout on " + o.redacted());
  }
  if (o.unix_path.empty()) redisEnableKeepAlive(ctx.get());

  Connection c(std::move(ctx), o.redacted());
  if (!o.password.empty()) {
    Command auth = o.username.empty() ? Command{"AUTH", o.password} : Command{"AUTH", o.username, o.password};
    Reply r = c.command(auth);
    if (r.is_error()) {
      // The server's text names no secret; ours must not either.
      throw Error(ErrorKind::Reply, "auth",
                  "the server at " + o.redacted() + " refused the login: " + r.str +
                      "; check the username and the password source");
    }
  }
  if (o.db != 0) expect_ok(c, {"SELECT", std::to_string(o.db)}, "select");
  if (!o.client_name.empty()) expect_ok(c, {"CLIENT", "SETNAME", o.client_name}, "client setname");
  return c;
}

void Connection::fail(const char* op) {
  broken_ = true;
  const int err = ctx_->err;
  const std::string text = ctx_->errstr;
  if (err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)) {
    throw Error(ErrorKind::Timeout, op, "no answer from " + address_ + " within the command timeout");
  }
  if (err == REDIS_ERR_PROTOCOL) throw Error(ErrorKind::Protocol, op, "unreadable reply from " + address_ + ": " + text);
  if (err == REDIS_ERR_EOF) throw Error(ErrorKind::Io, op, "the server at " + address_ + " closed the connection");
  throw Error(ErrorKind::Io, op, "lost the connection to " + address_ + ": " + text);
}

void Connection::append(const Command* commands, std::size_t count) {
  outbuf_.clear();
  for (std::size_t i = 0; i < count; ++i) outbuf_.add(commands[i]);
  append(outbuf_);
  outbuf_.clear();
}

void Connection::append(const RespBuffer& commands) {
  if (broken_) throw Error(ErrorKind::Io, "send", "the connection to " + address_ + " is broken");
  const std::string_view bytes = commands.bytes();
  if (redisAppendFormattedCommand(ctx_.get(), bytes.data(), bytes.size()) != REDIS_OK) fail("send");
}

Reply Connection::read_reply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) fail("read");
  ReplyPtr owned(raw);
  return convert(static_cast<redisReply*>(raw));
}

Reply Connection::command(const Command& argv) {
  append(&argv, 1);
  return read_reply();
}

std::vector<Reply> Connection::pipeline(const std::vector<Command>& commands) {
  append(commands.data(), commands.size());
  return read_replies(commands.size());
}

std::vector<Reply> Connection::pipeline(const RespBuffer& commands) {
  append(commands);
  return read_replies(commands.commands());
}

std::vector<Reply> Connection::read_replies(std::size_t count) {
  std::vector<Reply> replies;
  replies.reserve(count);
  for (std::size_t i = 0; i < count; ++i) replies.push_back(read_reply());
  return replies;
}

void Connection::send(const Command& argv) {
  append(&argv, 1);
  int done = 0;
  while (!done) {
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) fail("send");
  }
}

std::optional<Reply> Connection::read_for(std::chrono::milliseconds wait) {
  if (broken_) throw Error(ErrorKind::Io, "read", "the connection to " + address_ + " is broken");
  void* raw = nullptr;
  if (redisReaderGetReply(ctx_->reader, &raw) != REDIS_OK) fail("read");
  if (raw == nullptr) {
    pollfd p{ctx_->fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (n < 0 && errno != EINTR) fail("read");
    if (n <= 0) return std::nullopt;
    if (redisBufferRead(ctx_.get()) != REDIS_OK) fail("read");
    if (redisReaderGetReply(ctx_->reader, &raw) != REDIS_OK) fail("read");
    if (raw == nullptr) return std::nullopt;
  }
  ReplyPtr owned(raw);
  return convert(static_cast<redisReply*>(raw));
}

}  // namespace echomq
