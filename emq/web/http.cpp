#include "web/http.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "echomq/bytes.h"
#include "bytes_text.h"
#include "web/assets.h"
#include "web/events.h"
#include "web/groups_api.h"
#include "web/history_api.h"
#include "web/lists_api.h"
#include "web/origin.h"
#include "web/selection_api.h"
#include "web/server_api.h"

namespace echomq::cli {

using daemon::HttpRequest;
using daemon::HttpResponse;

namespace {

using json = nlohmann::ordered_json;

// Every answer: scripts and styles from this origin only (no inline script
// at all, so an injected tag could not run), no framing, no sniffing.
const std::vector<std::string> kSecurityHeaders = {
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options: nosniff",
    "X-Frame-Options: DENY",
    "Referrer-Policy: no-referrer",
    "Cross-Origin-Resource-Policy: same-origin",
};

HttpResponse json_response(const ApiAnswer& a) {
  HttpResponse r;
  r.status = a.status;
  r.content_type = "application/json; charset=utf-8";
  // Bytes that are not UTF-8 (a hostile queue name in the registry) are
  // replaced rather than failing the whole answer; payloads never get here
  // unchecked (shown_bytes).
  r.body = json_text(a.body) + "\n";
  return r;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(api_error(status, message));
}

// Compares without stopping at the first difference, so the time taken
// says nothing about how much of a guess was right.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& longer = a.size() >= b.size() ? a : b;
  for (std::size_t i = 0; i < longer.size(); ++i) {
    const unsigned char ca = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char cb = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(ca ^ cb);
  }
  return diff == 0;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded (and '+' as a space when plus_space, for query strings);
// nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_space) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '+' && plus_space) {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

// The path's segments, decoded: "/api/queues/a%2Fb" -> {"api", "queues", "a/b"}.
std::optional<std::vector<std::string>> segments_of(const std::string& path) {
  std::vector<std::string> out;
  std::size_t pos = 1;
  if (path.empty() || path[0] != '/') return std::nullopt;
  while (pos <= path.size()) {
    std::size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::optional<std::string> seg = percent_decode(std::string_view(path).substr(pos, slash - pos), false);
    if (!seg) return std::nullopt;
    out.push_back(std::move(*seg));
    pos = slash + 1;
  }
  if (!out.empty() && out.back().empty()) out.pop_back();  // a trailing slash
  return out;
}

// One parameter of a query string, decoded; "" when absent or malformed.
std::string query_param(const std::string& query, const std::string& name) {
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string pair = query.substr(pos, amp - pos);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string::npos ? "" : percent_decode(pair.substr(eq + 1), true).value_or("");
    }
    pos = amp + 1;
  }
  return "";
}

// Every value of a repeated parameter: ?queue=a&queue=b -> {"a", "b"}.
std::vector<std::string> query_params(const std::string& query, const std::string& name) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < query.size()) {
    std::size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string pair = query.substr(pos, amp - pos);
    const std::size_t eq = pair.find('=');
    if (eq != std::string::npos && pair.substr(0, eq) == name) {
      out.push_back(percent_decode(pair.substr(eq + 1), true).value_or(""));
    }
    pos = amp + 1;
  }
  return out;
}

const WebAsset* find_asset(std::string_view name) {
  for (const WebAsset& a : web_assets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string_view content_type_of(std::string_view name) {
  if (name.size() > 3 && name.substr(name.size() - 3) == ".js") return "text/javascript; charset=utf-8";
  if (name.size() > 4 && name.substr(name.size() - 4) == ".css") return "text/css; charset=utf-8";
  return "text/html; charset=utf-8";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

}  // namespace

std::string new_web_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  return hex_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

std::optional<HttpResponse> WebSite::refuse_caller(const HttpRequest& request) {
  if (security_.password) return refuse_password(request);
  // Without a password only loopback is served, and only to a loopback
  // Host naming this port: a page of another site whose name was made to
  // resolve to 127.0.0.1 (DNS rebinding) sends its own name as Host.
  if (!is_loopback_host_header(request.header("host"), security_.port)) {
    return error_response(
        403, "this page answers only to a loopback Host naming its port (localhost:" + std::to_string(security_.port) +
                 ", 127.0.0.1:" + std::to_string(security_.port) + ", [::1]:" + std::to_string(security_.port) +
                 "); set EMQ_WEB_PASSWORD to serve it under another name");
  }
  return std::nullopt;
}

std::optional<HttpResponse> WebSite::refuse_password(const HttpRequest& request) {
  const std::string auth = request.header("authorization");
  HttpResponse r = error_response(401, "this page needs the password (EMQ_WEB_PASSWORD of the emq web process)");
  r.headers.push_back("WWW-Authenticate: Basic realm=\"emq web\", charset=\"UTF-8\"");
  if (auth.empty()) return r;  // no attempt yet: the browser asks for one
  const auto now = AuthThrottle::Clock::now();
  if (const std::chrono::milliseconds wait = throttle_.wait(request.peer, now); wait.count() > 0) {
    const std::string seconds = std::to_string((wait.count() + 999) / 1000);
    HttpResponse slow = error_response(429, "too many wrong passwords from this address: try again in " + seconds +
                                                " s (the password was not checked)");
    slow.headers.push_back("Retry-After: " + seconds);
    return slow;
  }
  // "Basic base64(user:password)"; any user name will do.
  std::string decoded;
  const bool basic = auth.size() > 6 && (auth.compare(0, 6, "Basic ") == 0 || auth.compare(0, 6, "basic ") == 0);
  const std::size_t colon = basic && base64_decode(auth.substr(6), decoded) ? decoded.find(':') : std::string::npos;
  if (colon == std::string::npos || !same_secret(decoded.substr(colon + 1), *security_.password)) {
    throttle_.failed(request.peer, now);
    return r;
  }
  throttle_.passed(request.peer);
  return std::nullopt;
}

std::optional<HttpResponse> WebSite::refuse_action(const HttpRequest& request) const {
  if (security_.read_only) return error_response(403, "emq web runs --read-only: actions are refused");
  if (security_.token.empty() || !same_secret(request.header("x-emq-token"), security_.token)) {
    return error_response(403, "an action needs this process's token (X-EMQ-Token, from the page): reload the page");
  }
  // A browser names the page that sent the request; it must be one this
  // server serves, whatever the request's Host says.
  const std::string origin = request.header("origin");
  if (std::find(security_.origins.begin(), security_.origins.end(), origin) == security_.origins.end()) {
    std::string served;
    for (const std::string& o : security_.origins) served += (served.empty() ? "" : ", ") + o;
    return error_response(403, "an action must come from this page (Origin '" + origin.substr(0, 100) +
                                   "' is not one this server serves: " + served +
                                   "; emq web --origin adds the one you reach it by)");
  }
  const std::string site = request.header("sec-fetch-site");
  if (!site.empty() && site != "same-origin") {
    return error_response(403, "an action must come from this page (Sec-Fetch-Site: " + site.substr(0, 40) + ")");
  }
  const std::string length = request.header("content-length");
  if (!request.header("transfer-encoding").empty() || (!length.empty() && length != "0")) {
    return error_response(413, "actions take no body: everything they need is in the path and query");
  }
  return std::nullopt;
}

HttpResponse WebSite::handle(const HttpRequest& request) {
  HttpResponse r;
  if (std::optional<HttpResponse> refused = refuse_caller(request)) {
    r = std::move(*refused);
  } else if (request.method == "GET") {
    r = get(request);
  } else if (request.method == "POST") {
    r = post(request);
  } else {
    r = error_response(405, "only GET and POST are served");
    r.headers.push_back("Allow: GET, POST");
  }
  // A raw field brings its own, stricter policy (sandbox): one policy each.
  const bool own_policy = std::any_of(r.headers.begin(), r.headers.end(),
                                      [](const std::string& h) { return h.rfind("Content-Security-Policy:", 0) == 0; });
  for (const std::string& h : kSecurityHeaders) {
    if (!own_policy || h.rfind("Content-Security-Policy:", 0) != 0) r.headers.push_back(h);
  }
  return r;
}

// The search a query names; the text is in `text_param` (q, or match for
// the bulk POSTs).
static SearchApi::Query search_query(const HttpRequest& request, const char* text_param) {
  return {query_param(request.query, text_param), query_param(request.query, "queue"),
          query_param(request.query, "state"), query_param(request.query, "in"), query_param(request.query, "scan")};
}

HttpResponse WebSite::page() const {
  const WebAsset* index = find_asset("index.html");
  std::string html(index->body);
  // The token is hex; read-only is a word: neither needs escaping.
  replace_all(html, "{{TOKEN}}", security_.read_only ? "" : security_.token);
  replace_all(html, "{{READ_ONLY}}", security_.read_only ? "true" : "false");
  HttpResponse r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(html);
  return r;
}

HttpResponse WebSite::get(const HttpRequest& request) {
  const std::optional<std::vector<std::string>> seg = segments_of(request.path);
  if (!seg) return error_response(400, "malformed path: a % escape is not two hex digits");
  const std::vector<std::string>& s = *seg;
  const std::size_t n = s.size();
  // The page: one document for every view; its script reads the path.
  if (n == 0 || (n == 2 && s[0] == "queues") || (n == 4 && s[0] == "queues" && (s[2] == "jobs" || s[2] == "groups")) ||
      (n == 1 && s[0] == "daemons") || (n == 1 && s[0] == "search")) {
    return page();
  }
  if (n == 2 && s[0] == "api" && s[1] == "search") {
    return json_response(guarded_api([&] { return search_.search(search_query(request, "q")); }));
  }
  if (n == 2 && s[0] == "api" && s[1] == "daemons") return json_response(guarded_api([&] { return api_.daemons(); }));
  if (n == 2 && s[0] == "api" && s[1] == "history") {
    return json_response(guarded_api([&] {
      return history_answer(api_.executor(), query_param(request.query, "queue"), query_param(request.query, "range"));
    }));
  }
  if (n == 2 && s[0] == "api" && s[1] == "server") {
    return json_response(guarded_api([&] { return server_answer(api_.executor()); }));
  }
  if (n == 3 && s[0] == "api" && s[1] == "history" && s[2] == "recent") {
    return json_response(guarded_api([&] { return recent_history_answer(api_.executor()); }));
  }
  if (n == 2 && s[0] == "assets" && s[1] != "index.html") {
    if (const WebAsset* a = find_asset(s[1])) {
      HttpResponse r;
      r.content_type = std::string(content_type_of(a->name));
      r.body = std::string(a->body);
      return r;
    }
  }
  if (n == 2 && s[0] == "api" && s[1] == "events") return events_response(server_, query_param(request.query, "queue"));
  if (n == 3 && s[0] == "api" && s[1] == "events" && s[2] == "overview") {
    return overview_events_response(server_, query_params(request.query, "queue"));
  }
  if (n >= 2 && s[0] == "api" && s[1] == "queues") {
    if (n == 2) return json_response(guarded_api([&] { return api_.queues(); }));
    if (n == 3) {
      return json_response(guarded_api([&] {
        return api_.queue(s[2], query_param(request.query, "state"), query_param(request.query, "page"),
                          query_param(request.query, "size"));
      }));
    }
    if (n == 4 && s[3] == "completed") {
      return json_response(
          guarded_api([&] { return completed_answer(api_.executor(), s[2], query_param(request.query, "before")); }));
    }
    if (n == 5 && s[3] == "jobs") return json_response(guarded_api([&] { return api_.job(s[2], s[4]); }));
    if (n == 4 && s[3] == "groups") {
      return json_response(
          guarded_api([&] { return groups_answer(api_.executor(), s[2], query_param(request.query, "limit")); }));
    }
    if (n == 5 && s[3] == "groups") {
      return json_response(
          guarded_api([&] { return group_answer(api_.executor(), s[2], s[4], query_param(request.query, "page")); }));
    }
    if (n == 6 && s[3] == "jobs" && (s[5] == "payload" || s[5] == "result" || s[5] == "error")) {
      RawField f;
      ApiAnswer failed = guarded_api([&] {
        f = api_.job_field(s[2], s[4], s[5]);
        return ApiAnswer{};
      });
      if (failed.status != 200) return json_response(failed);
      HttpResponse r;
      r.status = f.status;
      r.body = std::move(f.bytes);
      // Shown as text only when it is; never as anything a browser runs.
      r.content_type = f.utf8 ? "text/plain; charset=utf-8" : "application/octet-stream";
      r.headers.push_back("Content-Security-Policy: sandbox");
      if (!f.utf8) r.headers.push_back("Content-Disposition: attachment; filename=\"" + s[5] + ".bin\"");
      return r;
    }
  }
  return error_response(404, "not found: see docs/web.md for the paths served");
}

// The actions of actions_api.h, nullopt for a path that is none of them.
std::optional<HttpResponse> WebSite::action_post(const HttpRequest& request, const std::vector<std::string>& s) {
  const std::size_t n = s.size();
  if (n == 6 && s[3] == "jobs" && s[5] == "promote") {
    return json_response(guarded_api([&] { return actions_.promote(s[2], s[4]); }));
  }
  if (n == 6 && s[3] == "schedules" && s[5] == "fire") {
    return json_response(guarded_api([&] { return actions_.fire(s[2], s[4]); }));
  }
  if (n == 4 && s[3] == "limits") {
    return json_response(guarded_api([&] {
      return actions_.limits(s[2], query_param(request.query, "max_active"), query_param(request.query, "rate"));
    }));
  }
  if (n == 6 && s[3] == "groups" && (s[5] == "pause" || s[5] == "resume" || s[5] == "policy")) {
    const GroupForm form{s[5], query_param(request.query, "weight"), query_param(request.query, "max_active"),
                         query_param(request.query, "rate")};
    return json_response(guarded_api([&] { return group_action(api_.executor(), s[2], s[4], form); }));
  }
  if (n == 5 && s[3] == "dead" && s[4] == "purge") {
    return json_response(guarded_api([&] { return actions_.purge_dead(s[2]); }));
  }
  return std::nullopt;
}

HttpResponse WebSite::post(const HttpRequest& request) {
  if (std::optional<HttpResponse> refused = refuse_action(request)) return std::move(*refused);
  const std::optional<std::vector<std::string>> seg = segments_of(request.path);
  if (!seg) return error_response(400, "malformed path: a % escape is not two hex digits");
  const std::vector<std::string>& s = *seg;
  const std::size_t n = s.size();
  if (n >= 4 && s[0] == "api" && s[1] == "queues") {
    if (n == 4 && (s[3] == "pause" || s[3] == "resume")) {
      const WebApi::PauseQuery how{query_param(request.query, "by"), query_param(request.query, "reason"),
                                   query_param(request.query, "for")};
      return json_response(guarded_api([&] { return api_.pause(s[2], s[3] == "pause", how); }));
    }
    if (n == 5 && s[3] == "selection") {
      return json_response(guarded_api([&] {
        return act_on_selection(api_.executor(), s[2], s[4], query_param(request.query, "state"),
                                query_params(request.query, "id"));
      }));
    }
    if (n == 5 && s[3] == "bulk" && (s[4] == "retry" || s[4] == "cancel")) {
      return json_response(guarded_api([&] { return search_.bulk(s[2], s[4], search_query(request, "match")); }));
    }
    if (std::optional<HttpResponse> r = action_post(request, s)) return std::move(*r);
    if (n == 4 && s[3] == "retry-dead") return json_response(guarded_api([&] { return api_.retry_all(s[2]); }));
    if (n == 6 && s[3] == "jobs" && s[5] == "retry") {
      return json_response(guarded_api([&] { return api_.retry(s[2], s[4]); }));
    }
    if (n == 6 && s[3] == "jobs" && s[5] == "cancel") {
      return json_response(guarded_api([&] { return api_.cancel(s[2], s[4]); }));
    }
  }
  if (n == 4 && s[0] == "api" && s[1] == "daemons" && (s[3] == "quiet" || s[3] == "stop")) {
    return json_response(guarded_api([&] { return api_.signal_daemon(s[2], s[3]); }));
  }
  return error_response(404, "no such action: see docs/web.md for the actions served");
}

}  // namespace echomq::cli
