#include "http/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "text/listen_address.h"
#include "text/lower_case.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After the response, how long the lingering close may wait for the client
// to hang up: closing with unread bytes would reset the connection and can
// destroy the response before the client read it.
constexpr milliseconds kLinger{1000};

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

std::string serialize(const HttpResponse& r) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  if (!r.stream) out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  for (const std::string& h : r.headers) out += h + "\r\n";
  out += "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
  out += r.body;
  return out;
}

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Fd bind_listener(const std::string& setting, const std::string& listen, const std::string& taken_hint) {
  std::string why;
  const std::optional<ListenAddress> address = parse_listen_address(listen, 0, why);
  if (!address) {
    throw std::runtime_error(setting + " '" + listen + "': expected host:port (127.0.0.1:8080, [::1]:8080), but " +
                             why);
  }
  const std::string port = std::to_string(address->port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address->host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(setting + " '" + listen + "': cannot resolve the host: " + ::gai_strerror(rc));
  }
  why = "no address";
  Fd fd;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!s) {
      why = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(s.get(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(s.get(), 64) == 0) {
      fd = std::move(s);
      break;
    }
    why = std::strerror(errno);
  }
  ::freeaddrinfo(found);
  if (!fd) {
    throw std::runtime_error(setting + " '" + listen + "': cannot listen: " + why + "; choose a free port" +
                             taken_hint);
  }
  return fd;
}

struct SocketAddress {
  std::string host;  // "127.0.0.1", "::1"; "" for another family
  int port = 0;
};

SocketAddress address_of(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return {text, ntohs(in->sin_port)};
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return {text, ntohs(in6->sin6_port)};
  }
  return {};
}

SocketAddress bound_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return {};
  return address_of(addr);
}

// End of the request head, or npos. Bare LF line ends are accepted too
// (RFC 9112 section 2.2 allows a recipient to).
std::size_t head_end(const std::string& buf) {
  std::size_t crlf = buf.find("\r\n\r\n");
  std::size_t lf = buf.find("\n\n");
  return std::min(crlf, lf);
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The header lines after the request line; false when one has no colon.
bool parse_headers(const std::string& head, std::map<std::string, std::string>& out) {
  std::size_t pos = head.find('\n');
  while (pos != std::string::npos && pos + 1 < head.size()) {
    const std::size_t start = pos + 1;
    pos = head.find('\n', start);
    const std::string line = head.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
    if (trim(line).empty()) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    out.emplace(lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return true;
}
}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

struct HttpServer::Connection {
  enum class Phase { Reading, Writing, Lingering };
  Fd fd;
  Phase phase = Phase::Reading;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  std::function<void(Fd)> stream;  // takes the connection once the head is sent
  std::string peer;
  Clock::time_point accepted;
  Clock::time_point deadline;  // Reading: the read deadline; then the whole exchange's
};

HttpServer::HttpServer(Params params)
    : params_(std::move(params)),
      listener_(bind_listener(params_.setting, params_.listen, params_.taken_hint)),
      wake_(make_pipe()) {
  const SocketAddress bound = bound_address(listener_.get());
  port_ = bound.port;
  host_ = bound.host.find(':') == std::string::npos ? bound.host : "[" + bound.host + "]";
  set_nonblocking(wake_.read.get());
}

HttpServer::~HttpServer() {
  request_stop();
  join();
}

void HttpServer::start() {
  thread_ = std::thread([this] { main(); });
}

void HttpServer::request_stop() {
  if (!wake_.write) return;
  char byte = 1;
  // A full pipe already holds a wake-up; nothing more to say.
  [[maybe_unused]] ssize_t n = ::write(wake_.write.get(), &byte, 1);
}

void HttpServer::join() {
  if (thread_.joinable()) thread_.join();
}

// What a route or a handler throws is one request's failure, never the
// server's: a 500 naming the path, and a log line.
HttpResponse HttpServer::serve(const std::string& method, const std::string& path, const Route& produce) const {
  try {
    return produce();
  } catch (const std::exception& e) {
    spdlog::warn("{}: {} {} failed: {}", params_.name, method, path.substr(0, 200), e.what());
    return text(500, "internal error while serving " + path + "\n");
  }
}

HttpResponse HttpServer::respond(const std::string& head, const std::string& peer) const {
  const std::size_t eol = head.find_first_of("\r\n");
  const std::string line = head.substr(0, eol);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0) {
    return text(400, "bad request: expected a request line like 'GET /metrics HTTP/1.1'\n");
  }
  const std::string method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::size_t question = target.find('?');
  const std::string path = target.substr(0, question);
  if (params_.handler) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.peer = peer;
    if (question != std::string::npos) req.query = target.substr(question + 1);
    if (!parse_headers(head, req.headers)) return text(400, "bad request: a header line without a colon\n");
    return serve(method, path, [&] { return params_.handler(req); });
  }
  if (method != "GET") {
    HttpResponse r = text(405, "method not allowed: only GET is served\n");
    r.headers.push_back("Allow: GET");
    return r;
  }
  auto route = params_.routes.find(path);
  if (route == params_.routes.end()) {
    std::string known;
    for (const auto& r : params_.routes) known += (known.empty() ? "" : " ") + r.first;
    return text(404, "not found: " + path + " (served: " + known + ")\n");
  }
  return serve(method, path, route->second);
}

bool HttpServer::evict_one(Connections& conns, Clock::time_point before) {
  // An answered one waiting for its client to hang up goes first, then
  // the one that has waited longest for its request.
  const auto rank = [](const Connection& c) {
    return std::make_pair(c.phase != Connection::Phase::Lingering, c.accepted);
  };
  auto oldest = conns.end();
  for (auto it = conns.begin(); it != conns.end(); ++it) {
    if (it->second.phase == Connection::Phase::Writing || it->second.accepted >= before) continue;
    if (oldest == conns.end() || rank(it->second) < rank(oldest->second)) oldest = it;
  }
  if (oldest == conns.end()) return false;
  conns.erase(oldest);
  return true;
}

void HttpServer::accept_all(Connections& conns) {
  // Only a connection that has had a turn to send its request may be
  // evicted: a burst of new clients cannot push out the one just before it.
  const Clock::time_point batch = Clock::now();
  while (true) {
    if (conns.size() >= params_.max_connections && !evict_one(conns, batch)) return;
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    Fd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
        spdlog::warn("{}: accept failed: {}", params_.name, std::strerror(errno));
      }
      return;
    }
    const int key = fd.get();
    Connection& c = conns[key];
    c.fd = std::move(fd);
    c.peer = address_of(peer).host;
    c.accepted = Clock::now();
    c.deadline = c.accepted + std::min(params_.read_deadline, params_.deadline);
  }
}

void HttpServer::main() {
  Connections conns;
  std::vector<pollfd> fds;
  while (true) {
    const int wait_ms = watch(conns, fds);
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      spdlog::error("{}: poll failed: {}; it stops serving", params_.name, std::strerror(errno));
      return;
    }
    if (fds[0].revents != 0) return;  // request_stop()
    const bool incoming = serve_ready(conns, fds);
    close_expired(conns);
    // Last: the requests that arrived are read before anyone is evicted.
    if (incoming) accept_all(conns);
  }
}

int HttpServer::watch(const Connections& conns, std::vector<pollfd>& fds) const {
  const Clock::time_point now = Clock::now();
  Clock::time_point next = now + std::chrono::hours(1);
  fds.clear();
  fds.push_back({wake_.read.get(), POLLIN, 0});
  // At the connection limit with every connection answering, the
  // listener is left alone: new clients wait in the backlog a moment.
  const bool full = conns.size() >= params_.max_connections &&
                    std::all_of(conns.begin(), conns.end(),
                                [](const auto& kv) { return kv.second.phase == Connection::Phase::Writing; });
  if (!full) fds.push_back({listener_.get(), POLLIN, 0});
  for (const auto& [key, c] : conns) {
    fds.push_back({key, static_cast<short>(c.phase == Connection::Phase::Writing ? POLLOUT : POLLIN), 0});
    next = std::min(next, c.deadline);
  }
  return static_cast<int>(std::chrono::duration_cast<milliseconds>(next - now).count() + 1);
}

bool HttpServer::serve_ready(Connections& conns, const std::vector<pollfd>& fds) {
  bool incoming = false;
  for (const pollfd& p : fds) {
    if (p.fd == listener_.get()) {
      incoming = (p.revents & POLLIN) != 0;
      continue;
    }
    auto it = conns.find(p.fd);
    if (p.revents == 0 || it == conns.end()) continue;
    Connection& c = it->second;
    const bool open = c.phase == Connection::Phase::Writing ? send_some(c) : read_some(c);
    if (!open) conns.erase(it);
  }
  return incoming;
}

bool HttpServer::send_some(Connection& c) {
  const ssize_t n = ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  c.sent += static_cast<std::size_t>(n);
  if (c.sent == c.out.size() && c.stream) {
    std::thread(std::move(c.stream), std::move(c.fd)).detach();
    return false;
  }
  if (c.sent == c.out.size()) {
    ::shutdown(c.fd.get(), SHUT_WR);
    c.phase = Connection::Phase::Lingering;
    c.deadline = std::min(c.deadline, Clock::now() + kLinger);
  }
  return true;
}

bool HttpServer::read_some(Connection& c) {
  char buf[4096];
  const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
  // Hung up (or, lingering, the normal end).
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
  if (n < 0 || c.phase == Connection::Phase::Lingering) return true;
  c.in.append(buf, static_cast<std::size_t>(n));
  if (head_end(c.in) != std::string::npos || c.in.size() >= params_.max_request_bytes) answer(c);
  return true;
}

void HttpServer::answer(Connection& c) {
  const std::size_t end = head_end(c.in);
  const HttpResponse r = end != std::string::npos && end < params_.max_request_bytes
                             ? respond(c.in.substr(0, end), c.peer)
                             : text(431, "request too large: at most " + std::to_string(params_.max_request_bytes) +
                                             " bytes of headers\n");
  c.out = serialize(r);
  c.stream = r.stream;
  c.in.clear();
  c.phase = Connection::Phase::Writing;
  c.deadline = c.accepted + params_.deadline;
}

void HttpServer::close_expired(Connections& conns) {
  const Clock::time_point now = Clock::now();
  for (auto it = conns.begin(); it != conns.end();) {
    it = now >= it->second.deadline ? conns.erase(it) : std::next(it);
  }
}

}  // namespace echomq::daemon
