// TLS over TCP, with OpenSSL. The server's certificate is verified, always:
// the chain against tls.ca_file or the system's store, the name against
// tls.server_name or the URL's host (an IP address as an IP address), and
// the name goes out as SNI. TLS 1.2 at least. A client certificate when
// cert_file and key_file are set.
//
// The handshake runs non-blocking under the connect timeout; afterwards the
// socket is blocking with the command timeout on it, as over plain TCP, so
// a round trip stays one write and one read (read-ahead takes a whole
// reply's records in one recv).
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "echomq/errors.h"
#include "echomq/tls.h"
#include "openssl_errors.h"
#include "transport.h"

namespace echomq {

namespace {
struct CtxDeleter {
  void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxDeleter>;
struct SslDeleter {
  void operator()(SSL* s) const noexcept { SSL_free(s); }
};
using SslPtr = std::unique_ptr<SSL, SslDeleter>;

// --- the socket under OpenSSL ---------------------------------------------
// OpenSSL's own socket BIO writes with write(2): a server gone would raise
// SIGPIPE and kill a process that does not ignore it (emq, a test, a
// library user). This one sends with MSG_NOSIGNAL; the rest is the same.
struct SocketState {
  int fd;
  bool eof = false;
};

int bio_write(BIO* b, const char* data, std::size_t len, std::size_t* written) {
  auto* s = static_cast<SocketState*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  ssize_t n;
  do {
    n = ::send(s->fd, data, len, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    *written = static_cast<std::size_t>(n);
    return 1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(b);
  return 0;
}

int bio_read(BIO* b, char* buf, std::size_t len, std::size_t* read) {
  auto* s = static_cast<SocketState*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  ssize_t n;
  do {
    n = ::recv(s->fd, buf, len, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    *read = static_cast<std::size_t>(n);
    return 1;
  }
  if (n == 0) s->eof = true;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(b);
  return 0;
}

long bio_ctrl(BIO* b, int cmd, long, void*) {
  if (cmd == BIO_CTRL_FLUSH) return 1;
  if (cmd == BIO_CTRL_EOF) return static_cast<SocketState*>(BIO_get_data(b))->eof ? 1 : 0;
  return 0;
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "echomq socket");
    if (m != nullptr) {
      BIO_meth_set_write_ex(m, bio_write);
      BIO_meth_set_read_ex(m, bio_read);
      BIO_meth_set_ctrl(m, bio_ctrl);
      BIO_meth_set_create(m, bio_create);
    }
    return m;
  }();
  return method;
}

// --- what went wrong, and what to do about it -----------------------------
std::string endpoint(const ConnectionOptions& o) {
  const bool v6 = o.host.find(':') != std::string::npos;
  return (v6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(o.port);
}

// What to do when the server turned the session down with an alert or
// spoke no TLS at all. "" when there is nothing better to say.
std::string alert_hint(int reason, const TlsOptions& t) {
  const bool have_cert = !t.cert_file.empty();
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
      if (!have_cert) {
        return "; the server wants a client certificate: set " + t.settings.cert_file + " and " + t.settings.key_file;
      }
      return "";
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
      return "; the server refused the client certificate in " + t.settings.cert_file +
             ": give one signed by a CA the server trusts (its tls-ca-cert-file), and in date";
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
      return "; the server did not answer in TLS: is that its TLS port (tls-port)? A plaintext port takes valkey://";
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      return "; the server offers no TLS 1.2 or later, which is the least emqd and emq accept";
    default: return "";
  }
}

std::string verify_hint(long result, const TlsOptions& t, const std::string& name) {
  switch (result) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      if (!t.ca_file.empty()) {
        return "the CA in " + t.ca_file + " did not sign the server's certificate: set " + t.settings.ca_file +
               " to the CA that did";
      }
      return "set " + t.settings.ca_file + " to the CA that signed the server's certificate";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "the server's certificate is not for '" + name + "': connect by a name it holds, or set " +
             t.settings.server_name + " to one";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
    case X509_V_ERR_CRL_HAS_EXPIRED:
      return "renew the server's certificate (or, if it is in date, set this machine's clock right)";
    default: return "check the server's certificate and " + t.settings.ca_file;
  }
}

[[noreturn]] void handshake_failed(const SSL* ssl, int ssl_error, int sys_errno, const ConnectionOptions& o,
                                   const std::string& name) {
  const std::string head = "TLS handshake with " + endpoint(o) + " failed: ";
  const long verify = SSL_get_verify_result(ssl);
  int code = 0;
  const std::string reason = take_openssl_reason(&code);
  if (verify != X509_V_OK) {
    throw Error(ErrorKind::Io, "tls",
                head + "certificate verify failed: " + X509_verify_cert_error_string(verify) + "; " +
                    verify_hint(verify, o.tls, name));
  }
  if (!reason.empty()) throw Error(ErrorKind::Io, "tls", head + reason + alert_hint(code, o.tls));
  if (ssl_error == SSL_ERROR_SYSCALL && sys_errno != 0) {
    throw Error(ErrorKind::Io, "tls", head + std::strerror(sys_errno));
  }
  throw Error(ErrorKind::Io, "tls",
              head +
                  "the server closed the connection; is that its TLS port (tls-port)? A plaintext port takes "
                  "valkey://");
}

// --- the context: trust, identity, version --------------------------------
[[noreturn]] void unusable(const std::string& setting, const std::string& why) {
  throw Error(ErrorKind::Io, "tls", "cannot use " + setting + ": " + why);
}

CtxPtr make_context(const TlsOptions& t) {
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) throw Error(ErrorKind::Io, "tls", "cannot create a TLS context: " + take_openssl_reason());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  SSL_CTX_set_read_ahead(ctx.get(), 1);
  if (t.ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
      unusable("the system's CA store",
               take_openssl_reason() + "; install ca-certificates or set " + t.settings.ca_file);
    }
  } else if (SSL_CTX_load_verify_locations(ctx.get(), t.ca_file.c_str(), nullptr) != 1) {
    ERR_clear_error();
    unusable(t.settings.ca_file, check_ca_file(t.ca_file));
  }
  if (t.cert_file.empty() != t.key_file.empty()) {
    throw Error(ErrorKind::Io, "tls",
                "a client certificate needs both " + t.settings.cert_file + " and " + t.settings.key_file);
  }
  if (!t.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), t.cert_file.c_str()) != 1) {
      ERR_clear_error();
      unusable(t.settings.cert_file, check_cert_file(t.cert_file));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), t.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
      ERR_clear_error();
      unusable(t.settings.key_file, check_key_file(t.key_file, t.cert_file));
    }
  }
  return ctx;
}

// Verify the name (an IP address is matched against the certificate's IP
// entries, a host name against its DNS names), and send it as SNI, which
// may carry no IP address (RFC 6066).
void expect_name(SSL* ssl, const std::string& name) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  bool ok;
  if (is_ip_address(name)) {
    ok = X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1;
  } else {
    ok = X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1 &&
         SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
  }
  if (!ok) throw Error(ErrorKind::Io, "tls", "cannot verify the server as '" + name + "': " + take_openssl_reason());
}

// --- the transport ---------------------------------------------------------
class TlsTransport final : public Transport {
 public:
  TlsTransport(Socket s, const ConnectionOptions& o)
      : socket_(std::move(s)), state_{socket_.fd()}, address_(o.redacted()), tls_(o.tls), ctx_(make_context(o.tls)) {
    ssl_.reset(SSL_new(ctx_.get()));
    BIO* bio = ssl_ ? BIO_new(socket_method()) : nullptr;
    if (bio == nullptr) throw Error(ErrorKind::Io, "tls", "cannot start a TLS session: " + take_openssl_reason());
    BIO_set_data(bio, &state_);
    SSL_set_bio(ssl_.get(), bio, bio);
  }

  void handshake(const ConnectionOptions& o, Deadline deadline) {
    const std::string name = o.tls.server_name.empty() ? o.host : o.tls.server_name;
    expect_name(ssl_.get(), name);
    while (true) {
      ERR_clear_error();
      errno = 0;
      const int rc = SSL_connect(ssl_.get());
      if (rc == 1) return;
      const int err = SSL_get_error(ssl_.get(), rc);
      const int sys_errno = errno;
      short events = 0;
      if (err == SSL_ERROR_WANT_READ) events = POLLIN;
      if (err == SSL_ERROR_WANT_WRITE) events = POLLOUT;
      if (events == 0) handshake_failed(ssl_.get(), err, sys_errno, o, name);
      pollfd p{socket_.fd(), events, 0};
      int n;
      do {
        n = ::poll(&p, 1, ms_left(deadline));
      } while (n < 0 && errno == EINTR);
      if (n == 0) {
        throw Error(ErrorKind::Timeout, "tls",
                    "TLS handshake with " + endpoint(o) +
                        " did not finish within the connect timeout; is that its TLS port (tls-port)?");
      }
      if (n < 0) throw_socket_error("tls", errno, address_);
    }
  }

  void write(std::string_view bytes) override {
    while (!bytes.empty()) {
      std::size_t n = 0;
      ERR_clear_error();
      if (SSL_write_ex(ssl_.get(), bytes.data(), bytes.size(), &n) != 1) {
        const int err = SSL_get_error(ssl_.get(), 0);
        const int sys_errno = errno;
        if (err == SSL_ERROR_SYSCALL) read_alert();
        errno = sys_errno;
        fail("send", err);
      }
      bytes.remove_prefix(n);
    }
  }

  std::size_t read(char* buf, std::size_t size) override {
    std::size_t n = 0;
    ERR_clear_error();
    if (SSL_read_ex(ssl_.get(), buf, size, &n) != 1) fail("read");
    return n;
  }

  std::size_t read_ready(char* buf, std::size_t size) override {
    // Non-blocking for this one read: a record may have arrived in part,
    // and its rest must not be waited for here.
    const int flags = ::fcntl(socket_.fd(), F_GETFL);
    ::fcntl(socket_.fd(), F_SETFL, flags | O_NONBLOCK);
    std::size_t n = 0;
    ERR_clear_error();
    const int rc = SSL_read_ex(ssl_.get(), buf, size, &n);
    const int err = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_.get(), rc);
    const int sys_errno = errno;
    ::fcntl(socket_.fd(), F_SETFL, flags);
    if (err == SSL_ERROR_NONE) return n;
    if (err == SSL_ERROR_WANT_READ) return 0;
    errno = sys_errno;
    fail("read", err);
  }

  // TLS 1.3 ends the handshake before the server has checked the client's
  // certificate: a server that refuses it sends an alert and closes, and
  // the first write then fails with a reset. The alert is still in the
  // socket's queue and says what went wrong: throw that, if it is there.
  void read_alert() {
    ERR_clear_error();
    char buf[256];
    if (read_ready(buf, sizeof buf) == 0) ERR_clear_error();
  }

  bool buffered() const override { return SSL_has_pending(ssl_.get()) == 1; }
  int fd() const noexcept override { return socket_.fd(); }

 private:
  [[noreturn]] void fail(const char* op) { fail(op, SSL_get_error(ssl_.get(), 0)); }

  [[noreturn]] void fail(const char* op, int err) {
    const int sys_errno = errno;
    int code = 0;
    const std::string reason = take_openssl_reason(&code);
    if (err == SSL_ERROR_ZERO_RETURN || code == SSL_R_UNEXPECTED_EOF_WHILE_READING || state_.eof) {
      if (code != 0 && code != SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        throw Error(ErrorKind::Io, "tls",
                    "the server at " + address_ + " ended the TLS session: " + reason + alert_hint(code, tls_));
      }
      throw_closed(op, address_);
    }
    // Blocking: wanting to read or write more means the command timeout passed.
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) throw_socket_error(op, EAGAIN, address_);
    if (err == SSL_ERROR_SYSCALL && reason.empty()) throw_socket_error(op, sys_errno != 0 ? sys_errno : EIO, address_);
    // An alert from the server (a client certificate it wants or refuses,
    // which TLS 1.3 sends after the handshake): a TLS matter, op "tls".
    throw Error(ErrorKind::Io, "tls",
                "lost the TLS connection to " + address_ + ": " + reason + alert_hint(code, tls_));
  }

  Socket socket_;
  SocketState state_;
  std::string address_;
  TlsOptions tls_;  // for the hints of later failures
  CtxPtr ctx_;
  SslPtr ssl_;
};
}  // namespace

bool is_ip_address(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, name.c_str(), buf) == 1 || ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

std::unique_ptr<Transport> tls_transport(Socket s, const ConnectionOptions& o, Deadline deadline) {
  auto t = std::make_unique<TlsTransport>(std::move(s), o);
  t->handshake(o, deadline);
  make_blocking(t->fd(), o.command_timeout, o.redacted());
  return t;
}

}  // namespace echomq
