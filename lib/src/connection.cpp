#include "echomq/connection.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>
#include <charconv>

#include "echomq/errors.h"
#include "transport.h"

namespace echomq {

namespace {
// What one read takes: a reply of a few bytes and the chunks of a 10 MiB
// payload alike, in few system calls.
constexpr std::size_t kReadSize = 64 * 1024;

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
    default: out.type = Reply::Type::Nil;
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

// AUTH, SELECT and CLIENT SETNAME, as the options ask.
void login(Connection& c, const ConnectionOptions& o) {
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

void Connection::ReaderDeleter::operator()(redisReader* r) const noexcept { redisReaderFree(r); }

Connection::Connection(std::unique_ptr<Transport> transport, std::string address)
    : transport_(std::move(transport)),
      reader_(redisReaderCreate()),
      address_(std::move(address)),
      inbuf_(new char[kReadSize]) {
  if (!reader_) throw Error(ErrorKind::Io, "connect", "out of memory creating a connection");
}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::open(const ConnectionOptions& o) {
  Connection c(open_transport(o), o.redacted());
  try {
    login(c, o);
  } catch (const Error& e) {
    // A TLS-only server drops a client that speaks plaintext to it.
    const bool maybe_tls_only = !o.tls.enabled && o.unix_path.empty() && e.kind() == ErrorKind::Io;
    if (!maybe_tls_only) throw;
    throw Error(e.kind(), e.op(),
                std::string(e.what()).substr(e.op().size() + 2) +
                    "; if the server takes only TLS there, use valkeys:// (or rediss://)");
  }
  return c;
}

void Connection::fail_protocol() {
  broken_ = true;
  throw Error(ErrorKind::Protocol, "read", "unreadable reply from " + address_ + ": " + reader_->errstr);
}

void Connection::write(const Command* commands, std::size_t count) {
  outbuf_.clear();
  for (std::size_t i = 0; i < count; ++i) outbuf_.add(commands[i]);
  write(outbuf_);
  outbuf_.clear();
}

void Connection::write(const RespBuffer& commands) {
  if (broken_) throw Error(ErrorKind::Io, "send", "the connection to " + address_ + " is broken");
  try {
    transport_->write(commands.bytes());
  } catch (const Error&) {
    broken_ = true;  // part of a command may have gone out: never reuse it
    throw;
  }
}

bool Connection::closed_by_server() const noexcept {
  if (broken_) return true;
  if (transport_->buffered()) return true;
  pollfd p{transport_->fd(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && p.revents != 0;
}

std::optional<Reply> Connection::take_reply() {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) fail_protocol();
  if (raw == nullptr) return std::nullopt;
  ReplyPtr owned(raw);
  return convert(static_cast<redisReply*>(raw));
}

void Connection::feed(std::size_t n) {
  if (redisReaderFeed(reader_.get(), inbuf_.get(), n) != REDIS_OK) fail_protocol();
}

Reply Connection::read_reply() {
  while (true) {
    if (std::optional<Reply> r = take_reply()) return std::move(*r);
    std::size_t n = 0;
    try {
      n = transport_->read(inbuf_.get(), kReadSize);
    } catch (const Error&) {
      broken_ = true;
      throw;
    }
    feed(n);
  }
}

Reply Connection::command(const Command& argv) {
  write(&argv, 1);
  return read_reply();
}

std::vector<Reply> Connection::pipeline(const std::vector<Command>& commands) {
  write(commands.data(), commands.size());
  return read_replies(commands.size());
}

std::vector<Reply> Connection::pipeline(const RespBuffer& commands) {
  write(commands);
  return read_replies(commands.commands());
}

std::vector<Reply> Connection::read_replies(std::size_t count) {
  std::vector<Reply> replies;
  replies.reserve(count);
  for (std::size_t i = 0; i < count; ++i) replies.push_back(read_reply());
  return replies;
}

void Connection::send(const Command& argv) { write(&argv, 1); }

std::optional<Reply> Connection::read_for(std::chrono::milliseconds wait) {
  if (broken_) throw Error(ErrorKind::Io, "read", "the connection to " + address_ + " is broken");
  const Deadline deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    if (std::optional<Reply> r = take_reply()) return r;
    try {
      if (!transport_->buffered()) {
        pollfd p{transport_->fd(), POLLIN, 0};
        const int n = ::poll(&p, 1, ms_left(deadline));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw_socket_error("read", errno, address_);
        if (n == 0) return std::nullopt;  // nothing in time: the connection stays good
      }
      const std::size_t got = transport_->read_ready(inbuf_.get(), kReadSize);
      // A TLS record that came in part: wait for its rest while time is left.
      if (got == 0 && ms_left(deadline) == 0) return std::nullopt;
      feed(got);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Protocol) broken_ = true;
      throw;
    }
  }
}

}  // namespace echomq
