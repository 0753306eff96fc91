// The HTTP side of `emq web`: who may ask (basic auth when a password is
// set, wrong ones slowed per client; else only a loopback Host naming the
// port served), what an action needs (POST, the process's token, an Origin
// the server serves, not --read-only), the paths of
// docs/web.md routed to the page or to the JSON API (api.h), and the
// headers every answer carries (a strict CSP, nosniff, no framing).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "web/actions_api.h"
#include "web/api.h"
#include "web/auth_throttle.h"
#include "web/search_api.h"
#include "http/http_server.h"

namespace echomq::cli {

struct WebSecurity {
  bool read_only = false;
  // Every action must carry it (header X-EMQ-Token); the page gets it in
  // its HTML. Random per process, so a page of an earlier run cannot act.
  std::string token;
  // EMQ_WEB_PASSWORD: when set, every request needs HTTP basic auth with
  // it (any user name). Never logged, never echoed.
  std::optional<std::string> password;
  // The port the page is served on (the Host check) and its origins, from
  // the address bound (origin.h): an action's Origin must be one.
  int port = 0;
  std::vector<std::string> origins;
};

class WebSite {
 public:
  // trace_url: --trace-url's template, "" when not given.
  WebSite(Executor& x, WebSecurity security, std::string trace_url = "")
      : api_(x, security.read_only, std::move(trace_url)),
        search_(x),
        actions_(x),
        server_(x.options()),
        security_(std::move(security)) {}

  // Every request of the HttpServer comes here, on its one thread.
  daemon::HttpResponse handle(const daemon::HttpRequest& request);

 private:
  // The answer that refuses the request (the caller is not let in; the
  // action is not allowed), or nullopt when it may go on.
  std::optional<daemon::HttpResponse> refuse_caller(const daemon::HttpRequest& request);
  std::optional<daemon::HttpResponse> refuse_password(const daemon::HttpRequest& request);
  std::optional<daemon::HttpResponse> refuse_action(const daemon::HttpRequest& request) const;
  daemon::HttpResponse get(const daemon::HttpRequest& request);
  daemon::HttpResponse post(const daemon::HttpRequest& request);
  std::optional<daemon::HttpResponse> action_post(const daemon::HttpRequest& request,
                                                  const std::vector<std::string>& segments);
  daemon::HttpResponse page() const;

  WebApi api_;
  SearchApi search_;
  ActionsApi actions_;
  ConnectionOptions server_;  // each page's event stream opens a connection of its own
  WebSecurity security_;
  AuthThrottle throttle_;
};

// A fresh token: 32 random bytes from the kernel, as hex.
std::string new_web_token();

}  // namespace echomq::cli
