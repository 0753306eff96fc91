// The HTTP server of the metrics endpoint and of `emq web`: HTTP/1.1, one
// request per connection (Connection: close), one thread around poll().
// Our own because prometheus-cpp's Exposer cannot serve /healthz next to
// /metrics. Exact GET routes for the endpoint; one handler that sees every
// request (method, path, query, headers; no body) for `emq web`. Small on
// purpose: a
// bounded request, a short deadline for the request to arrive and a longer
// one for the whole exchange (a client that trickles bytes is cut off, not
// waited for), a bounded number of connections where a new client evicts
// the oldest one still sending its request, so idle or slow clients can
// never keep a health probe out.
#pragma once

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
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // as sent, before '?', not percent-decoded
  std::string query;   // after '?', without it; "" when none
  // Header names lower-cased; a repeated header keeps its first value.
  std::map<std::string, std::string> headers;
  // The header's value, or "" when the request had none.
  std::string header(const std::string& lower_name) const;
};

class HttpServer {
 public:
  using Route = std::function<HttpResponse()>;
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  struct Params {
    std::string listen;                  // "host:port" or "[v6]:port"; port 0 picks a free one
    std::map<std::string, Route> routes;  // exact paths, "/metrics"; the query string is ignored
    // When set, every request goes to it instead of routes, whatever its
    // method; a request body is never read (its Content-Length is a header).
    Handler handler;
    std::string setting = "metrics.listen";  // names the address in errors
    // Said after "choose a free port" when the port is taken: the user's other way out.
    std::string taken_hint = ", or set metrics.listen to \"\" to turn the endpoint off";
    std::string name = "metrics endpoint";   // names the server in log lines
    std::chrono::milliseconds deadline{5000};       // from accept to the last byte sent
    std::chrono::milliseconds read_deadline{500};   // from accept to the end of the request head
    std::size_t max_request_bytes = 8192;           // request line and headers
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
  void start();
  void request_stop();
  void join();

 private:
  struct Connection;
  void main();
  void accept_all(std::map<int, Connection>& conns);
  // Makes room for one more connection: closes one accepted before
  // `before`, an answered one first, else the one that has waited longest
  // for its request. False when there is none.
  static bool evict_one(std::map<int, Connection>& conns, std::chrono::steady_clock::time_point before);
  HttpResponse respond(const std::string& head) const;
  HttpResponse serve(const std::string& method, const std::string& path,
                     const Route& produce) const;

  Params params_;
  Fd listener_;
  Pipe wake_;
  int port_ = 0;
  std::thread thread_;
};

// Whether every address listen's host resolves to is a loopback one
// (127.0.0.0/8, ::1). Throws std::runtime_error for a malformed address.
bool is_loopback_listen(const std::string& listen);

}  // namespace echomq::daemon
