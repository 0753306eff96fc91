// The metrics endpoint's HTTP server over real loopback sockets: routing,
// the refusals, and that a slow or greedy client cannot take it down.
#include "http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "http_client.h"

namespace echomq::daemon {
namespace {

using echomq::test::Client;
using echomq::test::http_get;
using echomq::test::http_request;
using std::chrono::milliseconds;
using std::chrono::seconds;

HttpServer::Params routes() {
  HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  // Its user's words, not the metrics endpoint's: the server has none of its own.
  p.setting = "test.listen";
  p.taken_hint = ", or stop the other test";
  p.name = "test server";
  p.routes["/metrics"] = [] {
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = "emq_valkey_up 1\n";
    return r;
  };
  p.routes["/healthz"] = [] {
    return HttpResponse{503, "text/plain; charset=utf-8", "the server does not answer\n", {}};
  };
  return p;
}

std::unique_ptr<HttpServer> serve(HttpServer::Params p) {
  auto s = std::make_unique<HttpServer>(std::move(p));
  s->start();
  return s;
}

TEST(HttpServer, ServesEachRouteWithItsStatusTypeAndLength) {
  auto s = serve(routes());
  ASSERT_GT(s->port(), 0);

  auto m = http_get(s->port(), "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(m.headers["content-length"], "16");
  EXPECT_EQ(m.headers["connection"], "close");
  EXPECT_EQ(m.body, "emq_valkey_up 1\n");
  EXPECT_TRUE(m.closed) << "Connection: close means the server hangs up after the answer";

  auto h = http_get(s->port(), "/healthz?verbose=1");
  EXPECT_EQ(h.status, 503) << "the query string does not change the route";
  EXPECT_EQ(h.body, "the server does not answer\n");
}

TEST(HttpServer, UnknownPathIs404NamingWhatIsServed) {
  auto s = serve(routes());
  auto a = http_get(s->port(), "/metrics/");
  EXPECT_EQ(a.status, 404);
  EXPECT_NE(a.body.find("/healthz"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("/metrics"), std::string::npos) << a.body;
}

TEST(HttpServer, OnlyGetIsServed) {
  auto s = serve(routes());
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
    auto a = http_request(s->port(), std::string(method) + " /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(a.status, 405) << method;
    EXPECT_EQ(a.headers["allow"], "GET") << method;
  }
}

TEST(HttpServer, AHandlersAnswerCarriesItsHeadersAloneAndSeesTheClient) {
  HttpServer::Params p = routes();
  p.handler = [](const HttpRequest& r) {
    HttpResponse a{405, "text/plain; charset=utf-8", "peer " + r.peer + "\n", {"Allow: GET, POST"}};
    return a;
  };
  auto s = serve(std::move(p));
  EXPECT_EQ(s->host(), "127.0.0.1");
  const std::string raw = http_request(s->port(), "DELETE /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n").raw;
  ASSERT_EQ(raw.rfind("HTTP/1.1 405 ", 0), 0u) << raw;
  const std::string head = raw.substr(0, raw.find("\r\n\r\n") + 2);
  EXPECT_EQ(head.find("Allow:"), head.rfind("Allow:")) << "one Allow header: " << head;
  EXPECT_NE(head.find("\r\nAllow: GET, POST\r\n"), std::string::npos) << head;
  EXPECT_NE(raw.find("peer 127.0.0.1\n"), std::string::npos) << raw;
}

TEST(HttpServer, GarbageIs400) {
  auto s = serve(routes());
  EXPECT_EQ(http_request(s->port(), "hello\r\n\r\n").status, 400);
  EXPECT_EQ(http_request(s->port(), "GET /metrics SPDY/3\r\n\r\n").status, 400);
  EXPECT_EQ(http_request(s->port(), "GET /metrics HTTP/1.0\n\n").status, 200) << "bare LF line ends are accepted";
}

TEST(HttpServer, OversizedRequestIs431AndTheConnectionEnds) {
  HttpServer::Params p = routes();
  p.max_request_bytes = 1024;
  auto s = serve(std::move(p));
  Client c(s->port());
  c.send("GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(4096, 'x'));  // never ends its headers
  auto a = c.read_all();
  EXPECT_EQ(a.status, 431);
  EXPECT_TRUE(a.closed);
}

TEST(HttpServer, ASlowClientIsCutOffAtTheDeadlineAndDoesNotBlockOthers) {
  HttpServer::Params p = routes();
  p.deadline = milliseconds(300);
  auto s = serve(std::move(p));

  Client slow(s->port());
  slow.send("GET /metr");  // and then nothing: the slowloris pattern
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(http_get(s->port(), "/metrics").status, 200) << "another client is served meanwhile";
  auto a = slow.read_all(std::chrono::seconds(5));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(a.closed) << "the slow connection is closed by the server";
  EXPECT_EQ(a.status, 0) << "and gets no answer";
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST(HttpServer, AtTheConnectionLimitANewClientEvictsASilentOne) {
  HttpServer::Params p = routes();
  p.deadline = seconds(20);
  p.read_deadline = seconds(20);  // so only an eviction can close a silent client here
  p.max_connections = 2;
  auto s = serve(std::move(p));
  Client idle1(s->port());
  idle1.send("GET /metrics HTTP/1.1\r\n");  // half a request, then silence
  // Accepted, not only queued: a request is answered in its turn.
  ASSERT_EQ(http_get(s->port(), "/metrics").status, 200);
  Client idle2(s->port());
  // Both slots are held by silent clients: the next one evicts the older
  // and is answered at once, not after a deadline.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(http_get(s->port(), "/metrics").status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_TRUE(idle1.read_all(milliseconds(5000)).closed) << "the longest silent client is evicted";
  (void)idle2;
}

TEST(HttpServer, AClientThatSendsNoRequestIsCutOffAtTheReadDeadline) {
  HttpServer::Params p = routes();
  p.read_deadline = milliseconds(200);
  auto s = serve(std::move(p));
  Client idle(s->port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.read_all(milliseconds(5000)).closed);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(4000)) << "well before the 5 s exchange deadline";
}

TEST(HttpServer, ALargeBodyArrivesWhole) {
  HttpServer::Params p = routes();
  const std::string big(3 << 20, 'm');  // past any socket buffer: partial writes
  p.routes["/big"] = [&big] { return HttpResponse{200, "text/plain", big, {}}; };
  auto s = serve(std::move(p));
  auto a = http_get(s->port(), "/big");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body.size(), big.size());
  EXPECT_EQ(a.body, big);
}

TEST(HttpServer, ARouteThatThrowsIs500AndTheServerGoesOn) {
  HttpServer::Params p = routes();
  p.routes["/boom"] = []() -> HttpResponse { throw std::runtime_error("registry gone"); };
  auto s = serve(std::move(p));
  EXPECT_EQ(http_get(s->port(), "/boom").status, 500);
  EXPECT_EQ(http_get(s->port(), "/metrics").status, 200);
}

TEST(HttpServer, StopsPromptlyWithClientsConnected) {
  auto s = serve(routes());
  const int port = s->port();
  Client idle(port);
  // Accepted (not only queued in the backlog): the server takes
  // connections in order, and a later one has been answered.
  ASSERT_EQ(http_get(port, "/metrics").status, 200);
  const auto start = std::chrono::steady_clock::now();
  s->request_stop();
  s->join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000)) << "it does not wait for the client";
  EXPECT_TRUE(idle.read_all(milliseconds(1000)).closed);
  s.reset();
  EXPECT_THROW(Client c(port), std::runtime_error) << "the port is closed";
}

TEST(HttpServer, ATakenPortIsAStartupErrorThatSaysWhatToDo) {
  auto first = serve(routes());
  HttpServer::Params p = routes();
  p.listen = "127.0.0.1:" + std::to_string(first->port());
  try {
    HttpServer second(std::move(p));
    FAIL() << "two servers on one port";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.listen '127.0.0.1:" + std::to_string(first->port()) + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
    EXPECT_NE(what.find("choose a free port, or stop the other test"), std::string::npos) << what;
    EXPECT_EQ(what.find("metrics"), std::string::npos) << "no words of the metrics endpoint: " << what;
  }
}

TEST(HttpServer, MalformedListenAddressesAreRefusedWithAnExample) {
  for (const char* bad : {"9464", "localhost", ":9464", "127.0.0.1:99999", "127.0.0.1:http", "[::1", "[::1]9464"}) {
    HttpServer::Params p = routes();
    p.listen = bad;
    try {
      HttpServer s(std::move(p));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("test.listen '" + std::string(bad) + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(HttpServer, ListensOnIpv6Loopback) {
  HttpServer::Params p = routes();
  p.listen = "[::1]:0";
  std::unique_ptr<HttpServer> s;
  try {
    s = serve(std::move(p));
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << "no IPv6 loopback on this machine: " << e.what();
  }
  EXPECT_EQ(s->host(), "[::1]");
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(static_cast<std::uint16_t>(s->port()));
  addr.sin6_addr = in6addr_loopback;
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string req = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
}

}  // namespace
}  // namespace echomq::daemon
