// `emq web`'s JSON API and its guards, against a real valkey-server and a
// real `emq web` process, over real sockets: every path's shape, paging by
// index, 400/404 for bad names and ids, actions with and without the token
// and a same-origin request, --read-only, the password, and hostile bytes
// staying data.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli_fixture.h"
#include "echomq/bytes.h"
#include "echomq/flows.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "echomq/events.h"
#include "minted_id.h"
#include "web_fixture.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

using json = nlohmann::json;

// Puts a job straight into the dead set with an error, as a worker's last
// failure would leave it (state, attempts, payload, failures, error).
void seed_dead(Executor& x, const QueueKeys& q, const std::string& id, const std::string& payload,
               const std::string& error, std::int64_t died_ms) {
  Reply r = x.command(
      {"HSET", q.row(id), "state", "dead", "attempts", "5", "payload", payload, "failures", "5", "error", error});
  ASSERT_FALSE(r.is_error()) << r.str;
  r = x.command({"ZADD", q.dead, std::to_string(died_ms), id});
  ASSERT_FALSE(r.is_error()) << r.str;
  register_queues(x, {q.queue});
}

TEST_F(WebApiTest, QueuesListsDepthsCountersPausedAndOldestPendingAge) {
  // An id dated a minute ago (mint_job_id(ms) would not go back past an
  // id this process minted later).
  enqueue(x(), keys(), id_minted_at(x().server_time_ms() - 60000), "a");
  enqueue(x(), keys(), mint_job_id(), "b");
  seed_dead(x(), keys(), "JOB_dead1", "p", "boom", 1000);
  pause(x(), keys());

  const HttpAnswer a = get("/api/queues");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.headers.at("content-type"), "application/json; charset=utf-8");
  const json b = body_of(a);
  EXPECT_EQ(b["read_only"], false);
  EXPECT_GT(b["server_time_ms"].get<std::int64_t>(), 0);
  const json* mine = nullptr;
  for (const json& q : b["queues"]) {
    if (q["queue"] == queue()) mine = &q;
  }
  ASSERT_NE(mine, nullptr) << a.body;
  EXPECT_EQ((*mine)["pending"], 2);
  EXPECT_EQ((*mine)["dead"], 1);
  EXPECT_EQ((*mine)["active"], 0);
  EXPECT_EQ((*mine)["delayed"], 0);
  EXPECT_EQ((*mine)["paused"], true);
  EXPECT_EQ((*mine)["counters"]["completed"], 0);
  EXPECT_GE((*mine)["oldest_pending_age_ms"].get<std::int64_t>(), 60000);
  EXPECT_LT((*mine)["oldest_pending_age_ms"].get<std::int64_t>(), 120000);
}

// The page's live feed: the queue's stream as server-sent events, each
// entry as it comes; a queue that keeps no events is told so, and closed.
TEST_F(WebApiTest, EventsStreamEachEntryAsItComesAndSayOffWithoutEvents) {
  x().command(events_write(keys(), 100));
  Client c(port());
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port()) + "\r\n\r\n";
  c.send("GET /api/events?queue=" + queue() + " HTTP/1.1\r\n" + host);
  std::string seen;
  const auto read_until = [&](const std::string& text) { return test::read_until(c, seen, text); };
  ASSERT_TRUE(read_until("event: ready")) << seen;
  EXPECT_NE(seen.find("Content-Type: text/event-stream"), std::string::npos) << seen;
  const std::string id = mint_job_id();
  x().eval(with_events(enqueue_call(keys(), id, "p"), keys(), 100));
  EXPECT_TRUE(read_until("\"event\":\"pending\",\"id\":\"" + id + "\"")) << seen;

  const HttpAnswer off = http_request(port(), "GET /api/events?queue=no-events HTTP/1.1\r\n" + host);
  EXPECT_TRUE(off.closed);
  EXPECT_NE(off.body.find("event: off"), std::string::npos) << off.raw;
}

// Each event stream holds a thread and a server connection, so at most 64
// are served at once, however fast they are asked for: 300 requests sent
// in a burst, before any answer is read, get at most 64 streams and a 503
// (poll instead) for the rest.
TEST_F(WebApiTest, AtMost64EventStreamsAreServedEvenInABurst) {
  x().command(events_write(keys(), 100));
  constexpr int kAsked = 300;
  const std::string request =
      "GET /api/events?queue=" + queue() + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port()) + "\r\n\r\n";
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kAsked; ++i) {
    clients.push_back(std::make_unique<Client>(port()));
    clients.back()->send(request);
  }
  int streams = 0, refused = 0, unanswered = 0;
  for (auto& c : clients) {
    // A stream's head comes and the stream stays open; a refusal closes.
    std::string seen;
    const bool headed = wait_for(
        [&] {
          const HttpAnswer a = c->read_all(std::chrono::milliseconds(50));
          seen += a.raw;
          return seen.find("\r\n\r\n") != std::string::npos || a.closed;
        },
        std::chrono::seconds(20));
    if (headed && seen.find("Content-Type: text/event-stream") != std::string::npos) {
      ++streams;
    } else if (seen.rfind("HTTP/1.1 503", 0) == 0) {
      ++refused;
    } else {
      ++unanswered;  // closed unanswered: evicted from a full server, as a burst may be
    }
  }
  std::printf("[figure] %d requests in a burst: %d streams, %d refused (503), %d closed unanswered\n", kAsked, streams,
              refused, unanswered);
  EXPECT_LE(streams, 64);
  EXPECT_GT(streams, 0);
  EXPECT_GT(refused, 0) << "past the 64, a page is told to poll";
  EXPECT_EQ(streams + refused + unanswered, kAsked);
}

TEST_F(WebApiTest, TwoHundredQueuesInOneRequest) {
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    QueueKeys q(queue() + "." + std::to_string(i));
    enqueue(x(), q, mint_job_id(), "x");
    names.push_back(q.queue);
  }
  register_queues(x(), names);
  const auto t0 = std::chrono::steady_clock::now();
  const HttpAnswer a = get("/api/queues");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[figure] GET /api/queues with %zu+ queues: %.3f s\n", names.size(), s);
  ASSERT_EQ(a.status, 200) << a.body;
  const json b = body_of(a);
  int seen = 0;
  for (const json& q : b["queues"]) {
    if (q["queue"].get<std::string>().rfind(queue() + ".", 0) == 0) {
      ++seen;
      EXPECT_EQ(q["pending"], 1);
    }
  }
  EXPECT_EQ(seen, 200);
}

TEST_F(WebApiTest, AQueuePagesByIndexNewestDeadFirstWithErrors) {
  for (int i = 0; i < 120; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "JOB_%03d", i);
    seed_dead(x(), keys(), id, "payload " + std::to_string(i), "error " + std::to_string(i), 1000 + i);
  }
  json b = body_of(get(qpath() + "?state=dead"));
  EXPECT_EQ(b["state"], "dead");
  EXPECT_EQ(b["order"], "descending");
  EXPECT_EQ(b["total"], 120);
  EXPECT_EQ(b["pages"], 3);
  EXPECT_EQ(b["page"], 1);
  ASSERT_EQ(b["jobs"].size(), 50u);
  EXPECT_EQ(b["jobs"][0]["id"], "JOB_119");
  EXPECT_EQ(b["jobs"][0]["time_ms"], 1119);
  EXPECT_EQ(b["jobs"][0]["error"]["text"], "error 119");
  EXPECT_EQ(b["jobs"][0]["payload"]["text"], "payload 119");
  EXPECT_EQ(b["queue"]["dead"], 120);

  b = body_of(get(qpath() + "?state=dead&page=3"));
  ASSERT_EQ(b["jobs"].size(), 20u);
  EXPECT_EQ(b["jobs"][19]["id"], "JOB_000");
  b = body_of(get(qpath() + "?state=dead&page=4"));
  EXPECT_EQ(b["jobs"].size(), 0u);
  b = body_of(get(qpath()));
  EXPECT_EQ(b["state"], "pending");
  EXPECT_EQ(b["total"], 0);
}

TEST_F(WebApiTest, BadStatesPagesQueueNamesAndIdsAre400AndMissingOnes404) {
  EXPECT_EQ(get(qpath() + "?state=finished").status, 400);
  EXPECT_EQ(get(qpath() + "?page=0").status, 400);
  EXPECT_EQ(get(qpath() + "?page=-1").status, 400);
  EXPECT_EQ(get(qpath() + "?page=x").status, 400);
  EXPECT_EQ(get(qpath() + "?page=99999999999999999999").status, 400);
  EXPECT_EQ(get("/api/queues/" + std::string(300, 'q')).status, 400);
  EXPECT_EQ(get("/api/queues/a%20b").status, 400);
  EXPECT_EQ(get("/api/queues/bad%zz").status, 400);
  EXPECT_EQ(get(qpath() + "/jobs/NOTAJOB").status, 400);
  const HttpAnswer missing = get(qpath() + "/jobs/JOB_missing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(body_of(missing)["error"].get<std::string>().find("JOB_missing"), std::string::npos);
  EXPECT_EQ(get("/api/nothing").status, 404);
  EXPECT_EQ(get("/assets/nothing.js").status, 404);
  EXPECT_EQ(request(port(), "DELETE", qpath()).status, 405);
}

TEST_F(WebApiTest, AJobShowsTextOrHexTruncatedWithTheWholeAtItsLink) {
  enqueue(x(), keys(), "JOB_text", "héllo");
  enqueue(x(), keys(), "JOB_bin", std::string("\x00\xff\x01", 3));
  const std::string big(100 * 1024, 'z');
  enqueue(x(), keys(), "JOB_big", big);

  json b = body_of(get(qpath() + "/jobs/JOB_text"));
  EXPECT_EQ(b["id"], "JOB_text");
  EXPECT_EQ(b["state"], "pending");
  EXPECT_EQ(b["payload"]["text"], "héllo");
  EXPECT_EQ(b["payload"]["truncated"], false);
  EXPECT_EQ(b["result"], nullptr);
  EXPECT_EQ(b["fields"]["attempts"]["text"], "0");

  b = body_of(get(qpath() + "/jobs/JOB_bin"));
  EXPECT_EQ(b["payload"]["hex"], "00ff01");
  EXPECT_FALSE(b["payload"].contains("text"));

  b = body_of(get(qpath() + "/jobs/JOB_big"));
  EXPECT_EQ(b["payload"]["truncated"], true);
  EXPECT_EQ(b["payload"]["bytes"], big.size());
  EXPECT_LT(b["payload"]["text"].get<std::string>().size(), big.size());
  const HttpAnswer whole = get(qpath() + "/jobs/JOB_big/payload");
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.body, big);
  EXPECT_EQ(whole.headers.at("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(whole.headers.at("content-security-policy"), "sandbox");
  const HttpAnswer bin = get(qpath() + "/jobs/JOB_bin/payload");
  EXPECT_EQ(bin.headers.at("content-type"), "application/octet-stream");
  EXPECT_EQ(bin.body, std::string("\x00\xff\x01", 3));
  EXPECT_EQ(get(qpath() + "/jobs/JOB_text/result").status, 404);
}

TEST_F(WebApiTest, ActionsNeedTheTokenAndASameOriginRequest) {
  const std::string origin = "http://127.0.0.1:" + std::to_string(port());
  const std::string token = token_of(port());
  ASSERT_EQ(token.size(), 64u);
  const std::string pause_path = qpath() + "/pause";
  auto paused = [&] { return stats(x(), keys()).paused; };

  EXPECT_EQ(request(port(), "POST", pause_path, {{"Origin", origin}}).status, 403) << "no token";
  EXPECT_EQ(request(port(), "POST", pause_path, {{"X-EMQ-Token", std::string(64, '0')}, {"Origin", origin}}).status,
            403)
      << "a wrong token";
  EXPECT_EQ(request(port(), "POST", pause_path, {{"X-EMQ-Token", token}}).status, 403) << "no Origin";
  EXPECT_EQ(request(port(), "POST", pause_path, {{"X-EMQ-Token", token}, {"Origin", "http://evil.example"}}).status,
            403);
  EXPECT_EQ(request(port(), "POST", pause_path,
                    {{"X-EMQ-Token", token}, {"Origin", origin}, {"Sec-Fetch-Site", "cross-site"}})
                .status,
            403);
  EXPECT_EQ(request(port(), "GET", pause_path).status, 404) << "an action is never a GET";
  EXPECT_FALSE(paused()) << "no refused request changed anything";

  HttpAnswer a = act(pause_path);
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(paused());
  EXPECT_EQ(act(qpath() + "/resume").status, 200);
  EXPECT_FALSE(paused());
}

TEST_F(WebApiTest, RetryOneRetryAllAndCancel) {
  seed_dead(x(), keys(), "JOB_a", "p", "e", 1);
  seed_dead(x(), keys(), "JOB_b", "p", "e", 2);
  seed_dead(x(), keys(), "JOB_c", "p", "e", 3);
  HttpAnswer a = act(qpath() + "/jobs/JOB_a/retry");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_a"), "state"}).str, "pending");
  EXPECT_EQ(act(qpath() + "/jobs/JOB_a/retry").status, 409) << "no longer dead";

  a = act(qpath() + "/retry-dead");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["moved"], 2);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Dead), 0);
  EXPECT_EQ(count_jobs(x(), keys(), JobState::Pending), 3);

  EXPECT_EQ(act(qpath() + "/jobs/JOB_b/cancel").status, 200);
  EXPECT_EQ(x().command({"EXISTS", keys().row("JOB_b")}).integer, 0);
  EXPECT_EQ(act(qpath() + "/jobs/JOB_b/cancel").status, 404);
  EXPECT_EQ(act(qpath() + "/jobs/NOPE/cancel").status, 400);
}

// A dead job whose unique key another live job holds stays dead, whichever
// retry the page asks for, and the answer names the job holding the key.
TEST_F(WebApiTest, ARetryMeetingAHeldKeyNamesTheHolder) {
  EnqueueOptions o;
  o.job.unique = UniqueKey{"sync:7", std::nullopt, 0};
  ASSERT_EQ(enqueue(x(), keys(), "JOB_dead", "p", o), EnqueueResult::Enqueued);
  const std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  FailArgs permanent;
  permanent.permanent = true;
  ASSERT_EQ(fail(x(), keys(), {"JOB_dead", jobs[0].lease_epoch}, permanent), FailResult::Dead);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_live", "p", o), EnqueueResult::Enqueued);

  json b = body_of(get(qpath() + "/jobs/JOB_dead"));
  EXPECT_EQ(b["fields"]["unique"]["text"], "sync:7");
  EXPECT_EQ(b["fields"]["unique_mode"]["text"], "finished");

  HttpAnswer a = act(qpath() + "/jobs/JOB_dead/retry");
  EXPECT_EQ(a.status, 409) << a.body;
  EXPECT_NE(a.body.find("its unique key is held by JOB_live (pending)"), std::string::npos) << a.body;
  a = act(qpath() + "/retry-dead");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["moved"], 0);
  EXPECT_EQ(body_of(a)["skipped"], 1);
  a = act(qpath() + "/selection/retry?state=dead&id=JOB_dead");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["done"], 0);
  EXPECT_EQ(body_of(a)["held"], 1);
  a = act(qpath() + "/bulk/retry?match=p");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["held"], 1);
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_dead"), "state"}).str, "dead");
  EXPECT_EQ(x().command({"GET", keys().uniq("sync:7")}).str, "JOB_live");
}

TEST_F(WebApiTest, EveryAnswerCarriesAStrictPolicy) {
  for (const std::string path : {"/", "/api/queues", "/assets/app.js", "/nothing"}) {
    HttpAnswer a = get(path);
    const std::string csp = a.headers["content-security-policy"];
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << path;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << path;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << path;
    EXPECT_EQ(a.headers["x-content-type-options"], "nosniff") << path;
  }
  const HttpAnswer page = get("/");
  EXPECT_EQ(page.headers.at("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.body.find("<script>"), std::string::npos) << "no inline script";
  EXPECT_EQ(get("/assets/app.js").headers.at("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(get("/queues/" + url_encode(queue()) + "/jobs/JOB_x").status, 200) << "every view is the one page";
}

// What the page of emq web serves: every view, the assets and the API.
std::vector<std::string> every_get_path(const std::string& queue) {
  const std::string q = url_encode(queue);
  return {"/",
          "/queues/" + q,
          "/queues/" + q + "/jobs/JOB_a",
          "/assets/app.js",
          "/api/queues",
          "/api/queues/" + q + "?state=dead",
          "/api/queues/" + q + "/jobs/JOB_a",
          "/api/queues/" + q + "/jobs/JOB_a/payload"};
}

HttpAnswer with_host(int port, const std::string& method, const std::string& path, const std::string& host,
                     const Headers& headers = {}) {
  std::string raw = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n";
  for (const auto& [k, v] : headers) raw += k + ": " + v + "\r\n";
  if (method == "POST") raw += "Content-Length: 0\r\n";
  return http_request(port, raw + "\r\n");
}

TEST_F(WebApiTest, ALoopbackPageAnswersOnlyToALoopbackHostNamingItsPort) {
  // A page of another site, its name made to resolve to 127.0.0.1, sends
  // its own Host: DNS rebinding must not reach the data or the token.
  seed_dead(x(), keys(), "JOB_a", "secret payload", "e", 1);
  const std::string p = std::to_string(port());
  const std::string wrong_port = std::to_string(port() == 65535 ? 1 : port() + 1);
  const std::vector<std::string> refused = {"evil.example:" + p,
                                            "127.0.0.1.evil.example:" + p,
                                            "127.evil:" + p,
                                            "127.0.0.1@evil.com:" + p,
                                            "127.0.0.1:" + p + "@evil.com",
                                            "127.0.0.1:" + wrong_port,
                                            "localhost:" + wrong_port,
                                            "127.0.0.1",  // no port is port 80
                                            "localhost.evil.example:" + p,
                                            "127.1:" + p,
                                            "0x7f.0.0.1:" + p,
                                            "127.000.000.001:" + p,
                                            "[::1].evil.example:" + p,
                                            "[::1]" + p,
                                            "[::2]:" + p,
                                            "::1:" + p,
                                            "127.0.0.1:" + p + ":" + p,
                                            "127.0.0.1:" + p + "/x",
                                            "127.0.0.1:",
                                            ""};
  for (const std::string& host : refused) {
    for (const std::string& path : every_get_path(queue())) {
      const HttpAnswer a = with_host(port(), "GET", path, host);
      EXPECT_EQ(a.status, 403) << "Host '" << host << "' GET " << path;
      EXPECT_EQ(a.body.find("emq-token"), std::string::npos) << host;
      EXPECT_EQ(a.body.find("secret payload"), std::string::npos) << host;
    }
  }
  const std::vector<std::string> served = {"127.0.0.1:" + p, "localhost:" + p, "LocalHost:" + p,
                                           "127.9.8.7:" + p, "[::1]:" + p,     "[0:0:0:0:0:0:0:1]:" + p};
  for (const std::string& host : served) {
    for (const std::string& path : every_get_path(queue())) {
      EXPECT_EQ(with_host(port(), "GET", path, host).status, 200) << "Host '" << host << "' GET " << path;
    }
  }
}

TEST_F(WebApiTest, AnActionNeedsALoopbackHostAndAnOriginThisServerServes) {
  seed_dead(x(), keys(), "JOB_a", "p", "e", 1);
  seed_dead(x(), keys(), "JOB_b", "p", "e", 2);
  const std::string p = std::to_string(port());
  const std::string token = token_of(port());
  const std::vector<std::string> actions = {qpath() + "/pause", qpath() + "/retry-dead", qpath() + "/jobs/JOB_a/retry",
                                            qpath() + "/jobs/JOB_a/cancel"};
  auto untouched = [&] {
    return !stats(x(), keys()).paused && count_jobs(x(), keys(), JobState::Dead) == 2 &&
           x().command({"EXISTS", keys().row("JOB_a")}).integer == 1;
  };
  // A rebinding page sends its own name as Host and Origin alike.
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1.evil.example:" + p, "127.evil:" + p, "127.0.0.1@evil.com:" + p}) {
    for (const std::string& path : actions) {
      const HttpAnswer a =
          with_host(port(), "POST", path, host,
                    {{"X-EMQ-Token", token}, {"Origin", "http://" + host}, {"Sec-Fetch-Site", "same-origin"}});
      EXPECT_EQ(a.status, 403) << host << " POST " << path;
    }
  }
  // A loopback Host, but an Origin built from it rather than one served:
  // the server listens on 127.0.0.1 only, so no page of 127.0.0.2 or
  // [::1] is its own.
  for (const std::string& host : std::vector<std::string>{"127.0.0.2:" + p, "[::1]:" + p, "127.0.0.1:" + p}) {
    for (const std::string& origin :
         std::vector<std::string>{"http://127.0.0.2:" + p, "http://[::1]:" + p, "http://127.0.0.1:1",
                                  "http://127.0.0.1.evil.example:" + p, "null"}) {
      for (const std::string& path : actions) {
        const HttpAnswer a = with_host(port(), "POST", path, host, {{"X-EMQ-Token", token}, {"Origin", origin}});
        EXPECT_EQ(a.status, 403) << host << " Origin " << origin << " POST " << path;
      }
    }
  }
  EXPECT_TRUE(untouched()) << "no refused action changed anything";
  // The served origins: the address listened on, and localhost for it.
  for (const std::string& origin : std::vector<std::string>{"http://127.0.0.1:" + p, "http://localhost:" + p}) {
    const HttpAnswer a =
        with_host(port(), "POST", qpath() + "/pause", "localhost:" + p, {{"X-EMQ-Token", token}, {"Origin", origin}});
    EXPECT_EQ(a.status, 200) << origin << ": " << a.body;
  }
  EXPECT_TRUE(stats(x(), keys()).paused);
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(WebApiTest, AMethodNotServedIs405WithOneAllowHeader) {
  for (const char* method : {"DELETE", "PUT", "PATCH"}) {
    const std::string raw = request(port(), method, qpath()).raw;
    ASSERT_EQ(raw.rfind("HTTP/1.1 405 ", 0), 0u) << raw;
    const std::string head = raw.substr(0, raw.find("\r\n\r\n"));
    EXPECT_EQ(count_of(head, "\r\nAllow:"), 1u) << head;
    EXPECT_NE(head.find("\r\nAllow: GET, POST"), std::string::npos) << head;
  }
}

TEST_F(WebApiTest, HostileIdsPayloadsAndErrorsStayData) {
  // Ids a peer may write: past the wire's gate, anything goes.
  const std::string id = "JOB<img src=x onerror=alert(1)>/\"'";
  seed_dead(x(), keys(), id, "<script>alert(1)</script>", "<img src=x onerror=alert(2)>", 5);
  json b = body_of(get(qpath() + "?state=dead"));
  ASSERT_EQ(b["jobs"].size(), 1u);
  EXPECT_EQ(b["jobs"][0]["id"], id);
  EXPECT_EQ(b["jobs"][0]["error"]["text"], "<img src=x onerror=alert(2)>");
  b = body_of(get(qpath() + "/jobs/" + url_encode(id)));
  EXPECT_EQ(b["id"], id);
  EXPECT_EQ(b["payload"]["text"], "<script>alert(1)</script>");
  const HttpAnswer a = act(qpath() + "/jobs/" + url_encode(id) + "/retry");
  EXPECT_EQ(a.status, 200) << a.body;
}

TEST_F(WebApiTest, ReadOnlyHasNoTokenAndRefusesActions) {
  EmqWeb ro({"--listen", "127.0.0.1:0", "--read-only"}, {{"EMQ_URL", server().url()}});
  ASSERT_GT(ro.port(), 0) << ro.output();
  EXPECT_EQ(token_of(ro.port()), "");
  EXPECT_EQ(body_of(request(ro.port(), "GET", "/api/queues"))["read_only"], true);
  const std::string origin = "http://127.0.0.1:" + std::to_string(ro.port());
  const HttpAnswer a =
      request(ro.port(), "POST", qpath() + "/pause", {{"X-EMQ-Token", token_of(port())}, {"Origin", origin}});
  EXPECT_EQ(a.status, 403);
  EXPECT_NE(body_of(a)["error"].get<std::string>().find("read-only"), std::string::npos);
  EXPECT_FALSE(stats(x(), keys()).paused);
}

TEST_F(WebApiTest, ANonLoopbackAddressIsRefusedWithoutAPassword) {
  EmqWeb open({"--listen", "0.0.0.0:0"}, {{"EMQ_URL", server().url()}});
  EXPECT_EQ(open.port(), 0);
  EXPECT_EQ(open.wait_exit(), 2);
  EXPECT_NE(open.output().find("EMQ_WEB_PASSWORD"), std::string::npos) << open.output();
}

TEST_F(WebApiTest, WithAPasswordEveryRequestNeedsBasicAuth) {
  const std::string password = "s3cret-Pa55";
  EmqWeb guarded({"--listen", "0.0.0.0:0"}, {{"EMQ_URL", server().url()}, {"EMQ_WEB_PASSWORD", password}});
  ASSERT_GT(guarded.port(), 0) << guarded.output();
  const int p = guarded.port();
  for (const std::string path : {"/", "/api/queues", "/assets/app.js"}) {
    HttpAnswer a = request(p, "GET", path);
    EXPECT_EQ(a.status, 401) << path;
    EXPECT_NE(a.headers["www-authenticate"].find("Basic"), std::string::npos) << path;
  }
  EXPECT_EQ(request(p, "GET", "/api/queues", {{"Authorization", "Basic " + base64_encode("emq:wrong")}}).status, 401);
  // A second failure makes this client wait 100 ms before its next attempt is checked.
  EXPECT_EQ(request(p, "GET", "/api/queues", {{"Authorization", "Basic !!!"}}).status, 401);
  const std::string good = "Basic " + base64_encode("emq:" + password);
  EXPECT_TRUE(wait_for(
      [&] {
        return request(p, "GET", "/api/queues", {{"Authorization", good}}).status == 200;
      },
      std::chrono::seconds(10)));
  // With the password, the Host may be any name the operator serves it by.
  EXPECT_EQ(
      http_request(p, "GET /api/queues HTTP/1.1\r\nHost: emq.internal\r\nAuthorization: " + good + "\r\n\r\n").status,
      200);
  guarded.stop();
  EXPECT_EQ(guarded.output().find(password), std::string::npos) << "the password never reaches the output";
}

TEST_F(WebApiTest, AnOriginGivenWithOriginMayActAndNoOther) {
  const std::string password = "s3cret-Pa55";
  EmqWeb bad({"--listen", "127.0.0.1:0", "--origin", "emq.example"}, {{"EMQ_URL", server().url()}});
  EXPECT_EQ(bad.wait_exit(), 2);
  EXPECT_NE(bad.output().find("--origin 'emq.example'"), std::string::npos) << bad.output();

  EmqWeb proxied({"--listen", "127.0.0.1:0", "--origin", "https://emq.example"},
                 {{"EMQ_URL", server().url()}, {"EMQ_WEB_PASSWORD", password}});
  ASSERT_GT(proxied.port(), 0) << proxied.output();
  const int p = proxied.port();
  const std::string auth = "Basic " + base64_encode("emq:" + password);
  const HttpAnswer page = request(p, "GET", "/", {{"Authorization", auth}});
  const std::string marker = "name=\"emq-token\" content=\"";
  const std::size_t at = page.body.find(marker) + marker.size();
  const std::string token = page.body.substr(at, page.body.find('"', at) - at);
  auto pause_from = [&](const std::string& origin) {
    return with_host(p, "POST", qpath() + "/pause", "emq.example",
                     {{"Authorization", auth}, {"X-EMQ-Token", token}, {"Origin", origin}});
  };
  const HttpAnswer other = pause_from("https://other.example");
  EXPECT_EQ(other.status, 403);
  EXPECT_NE(body_of(other)["error"].get<std::string>().find("https://emq.example"), std::string::npos)
      << "the refusal names the origins served: " << other.body;
  EXPECT_EQ(pause_from("http://emq.example").status, 403) << "not the Host's origin: only those served";
  EXPECT_FALSE(stats(x(), keys()).paused);
  const HttpAnswer ok = pause_from("https://emq.example");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_TRUE(stats(x(), keys()).paused);
}

TEST_F(WebApiTest, WrongPasswordsWaitLongerAndAreLoggedWithoutFlooding) {
  const std::string password = "s3cret-Pa55";
  EmqWeb guarded({"--listen", "127.0.0.1:0"}, {{"EMQ_URL", server().url()}, {"EMQ_WEB_PASSWORD", password}});
  ASSERT_GT(guarded.port(), 0) << guarded.output();
  const int p = guarded.port();
  auto attempt = [&](const std::string& pw) {
    return request(p, "GET", "/api/queues", {{"Authorization", "Basic " + base64_encode("emq:" + pw)}});
  };

  // A guesser as fast as it can go, 10 ms apart: most of its guesses are
  // refused unchecked (429) while it waits 0, 100, 200, 400, 800 ms after
  // its 1st..5th checked failure.
  const auto start = std::chrono::steady_clock::now();
  int checked = 0;
  int refused = 0;
  for (int i = 0; checked < 6 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30); ++i) {
    const HttpAnswer a = attempt("guess-" + std::to_string(i));
    if (a.status == 401) {
      ++checked;
    } else {
      ASSERT_EQ(a.status, 429) << a.body;
      EXPECT_GE(std::stoi(a.headers.at("retry-after")), 1);
      ++refused;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto took = std::chrono::steady_clock::now() - start;
  std::printf("[figure] 6 checked wrong passwords took %.2f s; %d more refused unchecked\n",
              std::chrono::duration<double>(took).count(), refused);
  ASSERT_EQ(checked, 6);
  EXPECT_GE(took, std::chrono::milliseconds(100 + 200 + 400 + 800)) << "each failure waits longer";
  EXPECT_GT(refused, 10);
  // It now waits 1.6 s: even the right password is not checked before.
  const HttpAnswer early = attempt(password);
  EXPECT_EQ(early.status, 429) << early.body;
  EXPECT_NE(body_of(early)["error"].get<std::string>().find("too many wrong passwords"), std::string::npos);
  // After the wait the right one is let in.
  EXPECT_TRUE(wait_for([&] { return attempt(password).status == 200; }, std::chrono::seconds(10)));

  guarded.stop();
  const std::string log = guarded.output();
  EXPECT_EQ(count_of(log, "wrong password"), 2u)
      << "the first at once, the rest counted into one line (here, at exit): " << log;
  EXPECT_NE(log.find("a wrong password from 127.0.0.1"), std::string::npos) << log;
  EXPECT_NE(log.find("5 wrong passwords from 1 client"), std::string::npos) << log;
  EXPECT_EQ(log.find("guess-"), std::string::npos) << "no password is ever logged";
  EXPECT_EQ(log.find(password), std::string::npos) << "no password is ever logged";
}

std::string hex_encode(const std::string& bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

// "%XX" for every byte the hex names, as the page builds a link from id_hex.
std::string segment_from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += "%" + hex.substr(i, 2);
  return out;
}

TEST_F(WebApiTest, AnIdThatIsNotUtf8IsLinkedAndActedOnByItsExactBytes) {
  // Two ids a peer may write that differ only in bytes U+FFFD would hide.
  const std::string id("JOB_\xff\xfe-\xc3", 8);
  const std::string twin("JOB_\xff\xfd-\xc3", 8);
  seed_dead(x(), keys(), id, "mine", "e", 1);
  seed_dead(x(), keys(), twin, "twin", "e", 2);

  const json listing = body_of(get(qpath() + "?state=dead"));
  ASSERT_EQ(listing["jobs"].size(), 2u);
  std::string segment;
  for (const json& j : listing["jobs"]) {
    ASSERT_TRUE(j.contains("id_hex")) << j.dump();
    if (j["id_hex"] == hex_encode(id)) segment = segment_from_hex(j["id_hex"]);
  }
  ASSERT_FALSE(segment.empty()) << listing.dump();

  const json job = body_of(get(qpath() + "/jobs/" + segment));
  EXPECT_EQ(job["id_hex"], hex_encode(id));
  EXPECT_EQ(job["payload"]["text"], "mine");
  EXPECT_EQ(get(qpath() + "/jobs/" + segment + "/payload").body, "mine");

  HttpAnswer a = act(qpath() + "/jobs/" + segment + "/retry");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(x().command({"HGET", keys().row(id), "state"}).str, "pending");
  EXPECT_EQ(x().command({"HGET", keys().row(twin), "state"}).str, "dead") << "its twin is untouched";
  a = act(qpath() + "/jobs/" + segment + "/cancel");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(x().command({"EXISTS", keys().row(id)}).integer, 0);
  EXPECT_EQ(x().command({"EXISTS", keys().row(twin)}).integer, 1);
}

// Its own server, stopped and started again: the page's data says the
// server cannot be reached, and comes back with it.
TEST_F(WebApiTest, AQueueShowsItsLimitsAndWhenRealClaimsHoldItBack) {
  for (int i = 0; i < 5; ++i) enqueue(x(), keys(), mint_job_id(), "p");
  register_queues(x(), {queue()});
  ASSERT_EQ(emq_limit({"--max-active", "2", "--rate", "3/1h"}), 0);

  json l = body_of(get(qpath()))["queue"]["limits"];
  EXPECT_EQ(l["max_active"], 2) << l;
  EXPECT_EQ(l["rate"]["max"], 3) << l;
  EXPECT_EQ(l["rate"]["window_ms"], 3600000) << l;
  EXPECT_EQ(l["tokens"], 3) << "a full bucket: " << l;
  EXPECT_TRUE(l["held_back"].is_null()) << l;

  ASSERT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 2u) << "max_active holds the claim to 2";
  l = body_of(get(qpath()))["queue"]["limits"];
  EXPECT_EQ(l["tokens"], 1) << l;
  EXPECT_EQ(l["held_back"], "max_active 2 reached (2 active)") << l;
  // The overview says the same.
  for (const json& q : body_of(get("/api/queues"))["queues"]) {
    if (q["queue"] == queue()) {
      EXPECT_EQ(q["limits"]["held_back"], "max_active 2 reached (2 active)") << q;
    }
  }

  ASSERT_EQ(emq_limit({"--max-active", "off"}), 0);
  ASSERT_EQ(claim(x(), keys(), {30000, 10, 0}).size(), 1u) << "the last token";
  l = body_of(get(qpath()))["queue"]["limits"];
  EXPECT_TRUE(l["max_active"].is_null()) << l;
  EXPECT_EQ(l["tokens"], 0) << l;
  EXPECT_GT(l["ms_to_token"].get<std::int64_t>(), 1000000) << "a token per 20 minutes: " << l;
  EXPECT_EQ(l["held_back"].get<std::string>().rfind("rate: no token left (next in ", 0), 0u) << l;

  ASSERT_FALSE(x().command({"HSET", keys().meta, "max_active", "0"}).is_error());
  l = body_of(get(qpath()))["queue"]["limits"];
  EXPECT_EQ(l["broken"], "max_active must be an integer in 1..1000000") << l;
  EXPECT_EQ(l["held_back"], "broken limit: max_active must be an integer in 1..1000000") << l;

  ASSERT_FALSE(x().command({"HDEL", keys().meta, "max_active", "rate_max", "rate_window_ms"}).is_error());
  EXPECT_TRUE(body_of(get(qpath()))["queue"]["limits"].is_null()) << "no limit, nothing shown";
}

TEST_F(WebApiTest, AScheduleShowsItsDefinitionFiresAndTheLastFiresJob) {
  const std::string name = "nightly.report";
  // As a daemon publishes it (scheduler.cpp, schedule_definition).
  ASSERT_FALSE(
      x().command({"HSET", keys().schedules, name,
                   R"({"every_ms":60000,"timezone":"UTC","lane":0,"overlap":"allow","misfire_grace_ms":5000})"})
          .is_error());
  const std::int64_t now = x().server_time_ms();
  const std::int64_t fire = now - now % 60000;
  const std::string id = mint_job_id();
  ASSERT_EQ(enqueue_cron(x(), keys(), id, "report", CronFire{name, fire, 0, false}), CronFireResult::Enqueued);

  const json b = body_of(get(qpath()));
  ASSERT_EQ(b["schedules"].size(), 1u) << b;
  const json& s = b["schedules"][0];
  EXPECT_EQ(s["name"], name);
  EXPECT_EQ(s["described"], "every 60000 ms");
  EXPECT_EQ(s["definition"]["misfire_grace_ms"], 5000);
  EXPECT_EQ(s["last_fire_ms"], fire);
  EXPECT_EQ(s["last_job"], id);
  EXPECT_EQ(s["next_fire_ms"], fire + 60000);
  EXPECT_EQ(s["missed"], 0);
  EXPECT_FALSE(s.contains("problem")) << s;

  // The same view as emq schedules --json: one reader serves both.
  const EmqResult cli = emq({"schedules", queue(), "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  json c = json::parse(cli.out)[0];
  for (const char* k : {"queue", "name", "definition", "last_fire_ms", "last_job", "next_fire_ms", "missed"}) {
    EXPECT_EQ(c[k], s[k]) << k;
  }

  // The link's target: the fire's job, marked with its schedule.
  const json job = body_of(get(qpath() + "/jobs/" + id));
  EXPECT_EQ(job["state"], "pending");
  EXPECT_EQ(job["fields"]["schedule"]["text"], name);

  ASSERT_FALSE(x().command({"HSET", keys().schedules, "broken", "not json"}).is_error());
  for (const json& t : body_of(get(qpath()))["schedules"]) {
    if (t["name"] == "broken") {
      EXPECT_EQ(t["problem"], "definition is not one this tool reads: not json") << t;
    }
  }

  // A marker key another writer broke is one problem shown, not a failed page.
  ASSERT_FALSE(x().command({"DEL", keys().cron}).is_error());
  ASSERT_FALSE(x().command({"SET", keys().cron, "x"}).is_error());
  const HttpAnswer broken = get(qpath());
  ASSERT_EQ(broken.status, 200) << broken.body;
  EXPECT_EQ(body_of(broken)["schedules"][0]["problem"].get<std::string>().rfind(keys().cron + ": WRONGTYPE", 0), 0u)
      << broken.body;
}

TEST_F(WebApiTest, AJobNamesItsParentAndAParentItsChildrenAndOrphans) {
  const std::string kids = queue().substr(0, 58) + ".kids";
  auto node = [](const std::string& q, const std::string& payload) {
    FlowNode n;
    n.queue = q;
    n.payload = payload;
    return n;
  };
  FlowNode root = node(queue(), "sheet");
  root.children = {node(kids, "a.png"), node(kids, "b.png")};
  const FlowJob ids = enqueue_flow(x(), root);
  ASSERT_EQ(ids.children.size(), 2u);

  json p = body_of(get(qpath() + "/jobs/" + ids.id));
  EXPECT_TRUE(p["parent"].is_null()) << p;
  ASSERT_EQ(p["children"].size(), 2u) << p;
  for (const json& c : p["children"]) {
    EXPECT_EQ(c["queue"], kids);
    EXPECT_EQ(c["state"], "pending");
    EXPECT_EQ(c["awaited"], true);
    EXPECT_TRUE(c["told"].is_null());
    EXPECT_TRUE(c["orphan"].is_null());
  }
  EXPECT_EQ(p["orphans"], 0);

  const std::string child = ids.children[0].id;
  json c = body_of(get("/api/queues/" + kids + "/jobs/" + child));
  EXPECT_EQ(c["parent"]["queue"], queue()) << c;
  EXPECT_EQ(c["parent"]["id"], ids.id) << c;
  EXPECT_EQ(c["parent"]["state"], "waiting") << c;
  EXPECT_TRUE(c["children"].is_null()) << "no parent: " << c;

  // A peer deletes a child's row: the parent waits on an orphan.
  ASSERT_EQ(x().command({"DEL", QueueKeys(kids).row(child)}).integer, 1);
  ASSERT_EQ(x().command({"ZREM", QueueKeys(kids).pending, child}).integer, 1);
  p = body_of(get(qpath() + "/jobs/" + ids.id));
  EXPECT_EQ(p["orphans"], 1) << p;
  for (const json& k : p["children"]) {
    if (k["id"] == child) {
      EXPECT_EQ(k["orphan"], "its row is gone") << k;
      EXPECT_TRUE(k["state"].is_null()) << k;
    } else {
      EXPECT_TRUE(k["orphan"].is_null()) << k;
    }
  }

  // The other completed by a speaker that knows nothing of flows: no
  // outbox entry, so no one will tell the parent.
  const QueueKeys kq(kids);
  const std::vector<ClaimedJob> other = claim(x(), kq, {30000, 1, 0});
  ASSERT_EQ(other.size(), 1u);
  ASSERT_EQ(
      decode_complete(x().eval(complete_call(kq, {other[0].id, other[0].lease_epoch}, 60000, "done", FlowMode::Plain))),
      CompleteResult::Completed);
  p = body_of(get(qpath() + "/jobs/" + ids.id));
  EXPECT_EQ(p["orphans"], 2) << p;
  for (const json& k : p["children"]) {
    if (k["id"] == other[0].id) {
      EXPECT_EQ(k["state"], "completed") << k;
      EXPECT_EQ(k["orphan"].get<std::string>().rfind("it completed without its outbox entry", 0), 0u) << k;
    }
  }

  const std::string plain = mint_job_id();
  enqueue(x(), keys(), plain, "x");
  const json j = body_of(get(qpath() + "/jobs/" + plain));
  EXPECT_TRUE(j["parent"].is_null() && j["children"].is_null()) << j;
}

TEST(WebApiOutage, ServerDownIs503ThenRecovers) {
  ValkeyServer server;
  EmqWeb web({"--listen", "127.0.0.1:0"}, {{"EMQ_URL", server.url()}});
  ASSERT_GT(web.port(), 0) << web.output();
  EXPECT_EQ(request(web.port(), "GET", "/api/queues").status, 200);
  server.stop();
  const HttpAnswer down = request(web.port(), "GET", "/api/queues");
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(json::parse(down.body)["server_unreachable"], true);
  server.start();
  EXPECT_TRUE(
      wait_for([&] { return request(web.port(), "GET", "/api/queues").status == 200; }, std::chrono::seconds(10)));
}

// Issue 52: a job whose row carries a producer's trace context shows its
// trace id, linked through --trace-url's template; a template that is no
// http(s) link with {trace_id} keeps emq web from starting.
TEST_F(WebApiTest, AJobsTraceIsLinkedThroughTheTraceUrlTemplate) {
  const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  ASSERT_EQ(enqueue(x(), keys(), "JOB_traced", "p"), EnqueueResult::Enqueued);
  ASSERT_FALSE(x().command({"HSET", keys().row("JOB_traced"), "traceparent", "00-" + trace_id + "-00f067aa0ba902b7-01",
                            "tracestate", "vendor=a"})
                   .is_error());
  ASSERT_EQ(enqueue(x(), keys(), "JOB_plain", "p"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_odd", "p"), EnqueueResult::Enqueued);
  ASSERT_FALSE(x().command({"HSET", keys().row("JOB_odd"), "traceparent", "<b>not a traceparent</b>"}).is_error());

  // Without a template: the id alone.
  json j = body_of(get(qpath() + "/jobs/JOB_traced"));
  EXPECT_EQ(j["trace"], json({{"id", trace_id}, {"url", nullptr}, {"problem", nullptr}})) << j;
  EXPECT_EQ(j["fields"]["tracestate"]["text"], "vendor=a") << j;
  EXPECT_TRUE(body_of(get(qpath() + "/jobs/JOB_plain"))["trace"].is_null());

  EmqWeb linked(
      {"--listen", "127.0.0.1:0", "--trace-url", "https://tracing.example/trace/{trace_id}?from=emq&q={trace_id}"},
      {{"EMQ_URL", server().url()}});
  ASSERT_GT(linked.port(), 0) << linked.output();
  j = body_of(request(linked.port(), "GET", qpath() + "/jobs/JOB_traced"));
  EXPECT_EQ(j["trace"]["url"], "https://tracing.example/trace/" + trace_id + "?from=emq&q=" + trace_id) << j;
  // A field another writer put there is said to be no trace, never linked.
  j = body_of(request(linked.port(), "GET", qpath() + "/jobs/JOB_odd"));
  EXPECT_TRUE(j["trace"]["id"].is_null()) << j;
  EXPECT_TRUE(j["trace"]["url"].is_null()) << j;
  EXPECT_NE(j["trace"]["problem"].get<std::string>().find("W3C traceparent"), std::string::npos) << j;

  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"javascript:alert(1)//{trace_id}", "http:// or https://"},
      {"https://tracing.example/trace/", "no {trace_id}"},
      {"https://tracing.example/{traceid}/{trace_id}", "the only placeholder"},
      {"https://user:pw@tracing.example/{trace_id}", "credentials"},
      {"https://tracing.example/\"{trace_id}", "percent-encode"},
      {"https:///{trace_id}", "the host is missing"}};
  for (const auto& [bad, why] : refusals) {
    EmqWeb refused({"--listen", "127.0.0.1:0", "--trace-url", bad}, {{"EMQ_URL", server().url()}});
    EXPECT_EQ(refused.port(), 0) << bad << " was taken: " << refused.output();
    if (refused.port() != 0) continue;  // serving: stopped as it goes out of scope
    EXPECT_EQ(refused.wait_exit(), 2) << bad;
    EXPECT_NE(refused.output().find("--trace-url: "), std::string::npos) << refused.output();
    EXPECT_NE(refused.output().find(why), std::string::npos) << bad << ": " << refused.output();
    EXPECT_EQ(refused.output().find("user:pw"), std::string::npos) << "a credential is never echoed";
  }
}

}  // namespace
}  // namespace echomq::test
