// A queue's `groups:` through the real emqd: written to emq:{q}:groups at
// start, exactly, and its groups' backlogs on /metrics, the largest ten.
#include <map>
#include <regex>
#include <sstream>

#include "doc_text.h"
#include "e2e_fixture.h"
#include "echomq/groups.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "http_client.h"

namespace echomq::test {
namespace {

class GroupsE2E : public E2E {
 protected:
  std::map<std::string, std::string> policies(const QueueKeys& q) {
    std::map<std::string, std::string> out;
    const Reply r = x.command({"HGETALL", q.groups});
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }
  std::string head(int metrics_port = 0) {
    std::string h = config_head(server);
    if (metrics_port != 0) {
      h = std::regex_replace(h, std::regex("listen: \"\""), "listen: 127.0.0.1:" + std::to_string(metrics_port));
    }
    return h;
  }
};

TEST_F(GroupsE2E, ADaemonStartedWithGroupsLeavesExactlyItsPoliciesOnTheServer) {
  const QueueKeys tenants("tenants"), other("other");
  // What emq group set wrote before: one the config restates, one it
  // changes, one it does not name, and the default.
  for (const auto& [g, text] : std::vector<std::pair<std::string, std::string>>{
           {"*", "weight=4"}, {"acme", "weight=7"}, {"calm", "weight=1"}, {"old", "weight=9 max_active=3"}}) {
    group_set(x, tenants, g, text);
  }
  group_set(x, other, "keep", "weight=5");
  EmqdProcess d(head() +
                "  - name: tenants\n"
                "    groups:\n"
                "      default: { weight: 2, max_active: 5, rate: { max: 10, per: 1s } }\n"
                "      overrides:\n"
                "        acme: { weight: 3 }\n"
                "        bolt: { paused: true }\n"
                "        calm: {}\n"
                "    handler: { type: exec, command: [/bin/cat] }\n"
                "  - name: other\n"
                "    handler: { type: exec, command: [/bin/cat] }\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::map<std::string, std::string> want = {{"*", "weight=2 max_active=5 rate_max=10 rate_window_ms=1000"},
                                                   {"acme", "weight=3"},
                                                   {"bolt", "paused=1"},
                                                   {"calm", "weight=1"}};
  EXPECT_EQ(policies(tenants), want) << d.log();
  EXPECT_EQ(policies(other), (std::map<std::string, std::string>{{"keep", "weight=5"}}))
      << "a queue without groups: leaves what emq group set wrote";
  const std::string log = d.log();
  EXPECT_NE(log.find("group old's policy was \"weight=9 max_active=3\", which the config does not name; deleted"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("group acme's policy was \"weight=7\"; now \"weight=3\" (from the config)"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("group calm's policy"), std::string::npos) << "an unchanged policy is not written again\n" << log;
  // Each write was group_set's, so a parsed policy reads as the config says.
  EXPECT_EQ(read_group(x, tenants, "bolt").policy->paused, true);
}

// docs/configuration.md's example, run as written: the policies the page
// says the server then holds are the ones a real emqd wrote.
TEST_F(GroupsE2E, TheConfigurationPagesExampleWritesThePoliciesItShows) {
  const std::string page = std::string(EMQ_SOURCE_DIR) + "/docs/configuration.md";
  const std::string yaml = fenced_block(page, "## Fair share between tenants", "yaml");
  const std::string held = fenced_block(page, "## Fair share between tenants", "text");
  std::map<std::string, std::string> shown;
  std::istringstream lines(held);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t gap = line.find(' ');
    shown[line.substr(0, gap)] = line.substr(line.find_first_not_of(' ', gap));
  }
  ASSERT_EQ(shown.size(), 4u) << held;
  const std::string head = config_head(server);
  EmqdProcess d(head.substr(0, head.find("queues:\n")) + yaml);
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_EQ(policies(QueueKeys("reports")), shown) << d.log();
}

// emq_group_jobs{queue="fair"}'s series on a scrape: group -> state -> value.
std::map<std::string, std::map<std::string, std::string>> group_series(const std::string& scrape) {
  std::map<std::string, std::map<std::string, std::string>> out;
  const std::regex line("(^|\n)emq_group_jobs\\{([^}]*)\\} (\\S+)");
  const std::regex group("group=\"([^\"]*)\""), state("state=\"([^\"]*)\""), queue("queue=\"fair\"");
  for (auto it = std::sregex_iterator(scrape.begin(), scrape.end(), line); it != std::sregex_iterator(); ++it) {
    const std::string labels = (*it)[2];
    std::smatch g, s;
    if (!std::regex_search(labels, queue) || !std::regex_search(labels, g, group) ||
        !std::regex_search(labels, s, state)) {
      continue;
    }
    out[g[1]][s[1]] = (*it)[3];
  }
  return out;
}

std::string gauge_of(const std::string& scrape, const std::string& series) {
  const std::string body = "\n" + scrape;
  const std::size_t at = body.find("\n" + series + " ");
  if (at == std::string::npos) return "";
  const std::size_t from = at + series.size() + 2;
  return body.substr(from, body.find('\n', from) - from);
}

TEST_F(GroupsE2E, MetricsShowTheTenLargestBacklogsAndTheirSeriesGoWhenTheyDrain) {
  const QueueKeys fair("fair");
  // Held while the groups fill, so the sample sees every one of them.
  ASSERT_EQ(run_program({emq_binary(), "--url", server.url(), "pause", "fair"}).code, 0);
  std::int64_t jobs = 0;
  for (int g = 1; g <= 12; ++g) {
    for (int i = 0; i < g; ++i, ++jobs) {
      EnqueueOptions o;
      o.group = "g" + std::string(g < 10 ? "0" : "") + std::to_string(g);
      enqueue(x, fair, mint_job_id(), "p", o);
    }
  }
  const int port = free_loopback_port();
  EmqdProcess d(head(port) + "  - name: fair\n    concurrency: 4\n    handler: { type: exec, command: [/bin/cat] }\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  std::string scrape;
  ASSERT_TRUE(wait_for(
      [&] {
        scrape = http_get(port, "/metrics").body;
        return gauge_of(scrape, "emq_groups{queue=\"fair\"}") == "12";
      },
      seconds(10)))
      << scrape;
  const auto series = group_series(scrape);
  ASSERT_EQ(series.size(), 10u) << scrape;
  for (int g = 3; g <= 12; ++g) {
    const std::string name = "g" + std::string(g < 10 ? "0" : "") + std::to_string(g);
    ASSERT_EQ(series.count(name), 1u) << name << " is among the ten largest\n" << scrape;
    EXPECT_EQ(series.at(name).at("pending"), std::to_string(g)) << name;
    EXPECT_EQ(series.at(name).at("active"), "0") << name;
  }
  EXPECT_NE(scrape.find("for the 10 groups with the largest backlogs only"), std::string::npos) << "the HELP says so";

  ASSERT_EQ(run_program({emq_binary(), "--url", server.url(), "resume", "fair"}).code, 0);
  ASSERT_TRUE(settled("fair", jobs)) << d.log();
  ASSERT_TRUE(wait_for(
      [&] {
        scrape = http_get(port, "/metrics").body;
        return gauge_of(scrape, "emq_groups{queue=\"fair\"}") == "0" && group_series(scrape).empty();
      },
      seconds(10)))
      << "a drained group's series go\n"
      << scrape;
}

// A group out of tokens waits in gwait, and nothing changes on the server
// when its token is back: an idle loop claims then, not at its next poll
// (poll_max_ms 10 s here, whose backoff alone would claim at 8.2 s).
TEST_F(GroupsE2E, AnIdleQueueClaimsAGroupWhenItsTokenIsBackNotAtItsNextPoll) {
  const QueueKeys metered("metered");
  EnqueueOptions o;
  o.group = "acme";
  for (int i = 0; i < 2; ++i) enqueue(x, metered, mint_job_id(), "p", o);
  EmqdProcess d(head() +
                "  - name: metered\n"
                "    poll_max_ms: 10000\n"
                "    groups:\n"
                "      overrides:\n"
                "        acme: { rate: { max: 1, per: 4200ms } }\n"
                "    handler: { type: exec, command: [/bin/cat] }\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const auto completed = [&] { return stats(x, metered).counters["completed"]; };
  ASSERT_TRUE(wait_for([&] { return completed() == 1; }, seconds(10))) << d.log();
  const auto first = std::chrono::steady_clock::now();
  // The token is back 4.2 s after the first claim; the second job's claim
  // follows within a few ms of it.
  ASSERT_TRUE(wait_for([&] { return completed() == 2; }, milliseconds(6500))) << d.log();
  const auto waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - first);
  std::printf("[figures] rate-parked group: second job done %lld ms after the first (token every 4200 ms)\n",
              static_cast<long long>(waited.count()));
}

// A group key claim keeps of another type (the rotation, here) refuses
// every claim of the queue: emqd names it, as it names pending or meta.
TEST_F(GroupsE2E, ARotationOfAnotherTypeIsNamedAndClaimsResumeWhenItGoes) {
  const QueueKeys q("rotq");
  ASSERT_FALSE(x.command({"SET", q.rot, "oops"}).is_error());
  enqueue(x, q, mint_job_id(), "p");
  EmqdProcess d(head() + "  - name: rotq\n    poll_max_ms: 50\n    handler: { type: exec, command: [/bin/cat] }\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_TRUE(d.wait_log("claims nothing until " + q.rot + " is a list again or gone", seconds(10))) << d.log();
  EXPECT_NE(d.log().find(q.rot + " holds a string, not a list"), std::string::npos) << d.log();
  ASSERT_EQ(x.command({"DEL", q.rot}).integer, 1);
  EXPECT_TRUE(settled("rotq", 1)) << d.log();
  EXPECT_TRUE(d.wait_log(q.rot + " is a list again or gone: claiming resumes", seconds(5))) << d.log();
}

}  // namespace
}  // namespace echomq::test
