// emq web [--listen 127.0.0.1:9465] [--read-only] [--origin URL]...: serves
// the operator's page (docs/web.md) until SIGINT or SIGTERM.
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "echomq/errors.h"
#include "output.h"
#include "tool.h"
#include "trace_url.h"
#include "web/http.h"
#include "web/origin.h"
#include "http/http_server.h"
#include "text/listen_address.h"

namespace echomq::cli {

namespace {

constexpr const char* kPasswordVar = "EMQ_WEB_PASSWORD";

struct WebArgs {
  std::string listen = "127.0.0.1:9465";
  bool read_only = false;
  std::vector<std::string> origins;  // more origins the page is reached at
  std::string trace_url;             // a job's trace link, with {trace_id}
};

int run_web(Tool& tool, const WebArgs& a) {
  WebSecurity security;
  security.read_only = a.read_only;
  if (const char* pw = std::getenv(kPasswordVar); pw != nullptr && *pw != '\0') security.password = pw;
  std::string why;
  const std::optional<daemon::ListenAddress> listen = daemon::parse_listen_address(a.listen, 0, why);
  if (!listen) {
    say("--listen '" + a.listen + "': expected host:port (127.0.0.1:9465, [::1]:9465), but " + why);
    return kExitUsage;
  }
  for (const std::string& origin : a.origins) {
    if (std::string problem = origin_problem(origin); !problem.empty()) {
      say("--origin '" + origin + "': " + problem);
      return kExitUsage;
    }
  }
  if (std::string problem = trace_url_problem(a.trace_url); !a.trace_url.empty() && !problem.empty()) {
    say("--trace-url: " + problem);
    return kExitUsage;
  }
  const bool loopback = daemon::is_loopback_host(listen->host);
  if (!loopback && !security.password) {
    say("--listen " + a.listen + " is not a loopback address: set " + kPasswordVar +
        " (every request then needs it, by HTTP basic auth), or listen on 127.0.0.1");
    return kExitUsage;
  }
  if (!a.read_only) security.token = new_web_token();

  // The server may be down at start: the page says so and recovers when it
  // is back, so nothing is read before serving.
  Executor x(tool.options(), ReconnectPolicy{std::chrono::milliseconds(100), std::chrono::milliseconds(2000), {}});
  // Made once the address is bound: the checks compare with the port and
  // the origins actually served.
  std::optional<WebSite> site;

  // Blocked before the server's thread starts, so it inherits the mask and
  // only sigwait below sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  daemon::HttpServer::Params p;
  p.listen = a.listen;
  p.setting = "--listen";
  p.taken_hint = "";
  p.name = "emq web";
  p.handler = [&site](const daemon::HttpRequest& r) { return site->handle(r); };
  // A page's answer may wait on the server's command timeout.
  p.deadline = std::chrono::seconds(15);
  p.read_deadline = std::chrono::seconds(5);
  std::unique_ptr<daemon::HttpServer> server;
  try {
    server = std::make_unique<daemon::HttpServer>(std::move(p));
  } catch (const std::runtime_error& e) {
    say(e.what());
    return kExitUsage;
  }
  security.port = server->port();
  security.origins = served_origins(listen->host, server->host(), server->port(), loopback, a.origins);
  site.emplace(x, std::move(security), a.trace_url);
  server->start();
  const std::string shown = a.listen.substr(0, a.listen.rfind(':'));
  std::cout << "emq web: serving http://" << shown << ":" << server->port() << "/"
            << (a.read_only ? " (read-only)" : "") << std::endl;

  int sig = 0;
  sigwait(&stop, &sig);
  server->request_stop();
  server->join();
  std::cout << "emq web: stopped" << std::endl;
  return kExitOk;
}

}  // namespace

void add_web(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<WebArgs>();
  CLI::App* sub = app.add_subcommand("web", "serve the operator's page: queues, jobs and actions in a browser");
  sub->add_option("--listen", a->listen, "host:port to serve on (default 127.0.0.1:9465; port 0 picks one)")
      ->type_name("ADDR");
  sub->add_flag("--read-only", a->read_only, "show no actions and refuse them");
  sub->add_option("--origin", a->origins,
                  "another origin the page is reached at (a name, a proxy: https://emq.example); actions "
                  "come only from the listen address's origins and these")
      ->type_name("URL");
  sub->add_option("--trace-url", a->trace_url,
                  "link a job's trace to your tracing tool: a URL with {trace_id} "
                  "(https://tracing.example/trace/{trace_id})")
      ->type_name("TEMPLATE");
  sub->footer(
      "A non-loopback --listen needs EMQ_WEB_PASSWORD, which every request must then give by HTTP basic\n"
      "auth (any user name). Actions are POSTs carrying a per-process token the page gets from the\n"
      "server, sent from an origin the server serves (its --listen address; --origin adds one).\n"
      "See docs/web.md for the paths and the JSON API.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_web(tool, *a); }; });
}

}  // namespace echomq::cli
