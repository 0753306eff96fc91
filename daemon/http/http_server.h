// The HTTP server of the metrics endpoint and of `emq web`: HTTP/1.1, one
// request per connection (Connection: close), one thread around poll().
// Our own because prometheus-cpp's Exposer cannot serve /healthz next to
// /metrics. Exact GET routes for the endpoint; one handler that sees every
// request (method, path, query, headers, the client's address; no body) for
// `emq web`. It knows nothing of either user: the setting that names its
// address and the advice for a taken port are theirs. Small on purpose: a
// bounded request, a short deadline for the request to arrive and a longer
// one for the whole exchange (a client that trickles bytes is cut off, not
// waited for), a bounded number of connections where a new client evicts
// the oldest one still sending its request, so idle or slow clients can
// never keep a health probe out.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "process/fd.h"

namespace echomq::daemon {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // More header lines, "Name: value" each (CSP, WWW-Authenticate, ...).
  std::vector<std::string> headers;
  // A response that goes on after its head (server-sent events): the head
  // is sent without a Content-Length or body, then the connection is
  // handed to this, on a thread of its own, and the server forgets it.
  std::function<void(Fd)> stream;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // as sent, before '?', not percent-decoded
  std::string query;   // after '?', without it; "" when none
  // Header names lower-cased; a repeated header keeps its first value.
  std::map<std::string, std::string> headers;
  std::string peer;  // the client's address: "127.0.0.1", "::1"
  // The header's value, or "" when the request had none.
  std::string header(const std::string& lower_name) const;
};

class HttpServer {
 public:
  using Route = std::function<HttpResponse()>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  struct Params {
    std::string listen;                   // "host:port" or "[v6]:port"; port 0 picks a free one
    std::map<std::string, Route> routes;  // exact paths, "/metrics"; the query string is ignored
    // When set, every request goes to it instead of routes, whatever its
    // method; a request body is never read (its Content-Length is a header).
    Handler handler;
    std::string setting;  // names the address in errors: "metrics.listen", "--listen"
    // Said after "choose a free port" when the port is taken: the user's
    // other way out (", or set X to \"\" to turn it off"), or "".
    std::string taken_hint;
    std::string name;                              // names the server in log lines
    std::chrono::milliseconds deadline{5000};      // from accept to the last byte sent
    std::chrono::milliseconds read_deadline{500};  // from accept to the end of the request head
    std::size_t max_request_bytes = 8192;          // request line and headers
    std::size_t max_connections = 64;
  };

  // Binds and listens at once, so a taken port is a startup error. Throws
  // std::runtime_error naming the address and what to do.
  explicit HttpServer(Params params);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when listen asked for port 0).
  int port() const { return port_; }
  // The bound address as a URL writes it: "127.0.0.1", "[::1]".
  const std::string& host() const { return host_; }
  void start();
  void request_stop();
  void join();

 private:
  struct Connection;
  using Connections = std::map<int, Connection>;
  void main();
  // The wake-up pipe, the listener (unless every slot is answering) and
  // each connection, by what it waits for; returns poll's timeout in ms,
  // up to the nearest deadline.
  int watch(const Connections& conns, std::vector<pollfd>& fds) const;
  // One turn for each connection poll found ready; returns whether the
  // listener has clients waiting.
  bool serve_ready(Connections& conns, const std::vector<pollfd>& fds);
  // Sends what the socket takes; false when the connection is over.
  static bool send_some(Connection& c);
  // Reads what arrived and answers a whole request; false when the
  // connection is over.
  bool read_some(Connection& c);
  void answer(Connection& c);
  static void close_expired(Connections& conns);
  void accept_all(Connections& conns);
  // Makes room for one more connection: closes one accepted before
  // `before`, an answered one first, else the one that has waited longest
  // for its request. False when there is none.
  static bool evict_one(Connections& conns, std::chrono::steady_clock::time_point before);
  HttpResponse respond(const std::string& head, const std::string& peer) const;
  HttpResponse serve(const std::string& method, const std::string& path, const Route& produce) const;

  Params params_;
  Fd listener_;
  Pipe wake_;
  int port_ = 0;
  std::string host_;
  std::thread thread_;
};

}  // namespace echomq::daemon
