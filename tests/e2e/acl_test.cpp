// The least-privilege Valkey user of docs/production.md, taken from the
// page's text as written: a whole case runs through it (emq enqueues, emqd
// claims, renews, completes and kills jobs to the dead set with exec
// handlers, beats into the fleet registry and answers a quiet, emq reads,
// pauses, retries and waits), on the scripts and on the emq module, and
// the server's ACL LOG must record no refusal. A command
// either program starts to use without the page granting it fails here.
// The user is made three ways: the page's valkey-cli lines on a server
// with the module and on one without, and the page's access string (what a
// managed service's API takes) applied as that API would, with the
// password apart.
#include <cctype>
#include <sstream>

#include "doc_text.h"
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

const std::string kPassword = "CHANGE-ME";  // as the page writes it

// The page's `valkey-cli ACL SETUSER emq ...` lines, in order.
std::vector<std::string> acl_lines() {
  std::istringstream page(read_doc(std::string(EMQ_SOURCE_DIR) + "/docs/production.md"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(page, line);) {
    if (line.rfind("valkey-cli ACL SETUSER emq ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

// The page's access string, for a service that makes users through its API.
std::vector<std::string> access_string() {
  std::istringstream block(fenced_block(std::string(EMQ_SOURCE_DIR) + "/docs/production.md",
                                        "## A Valkey user with least privilege", "text"));
  std::vector<std::string> rules;
  for (std::string rule; block >> rule;) rules.push_back(rule);
  return rules;
}

// The base line's rules as a server reads them: bash's quotes and
// backslashes gone, without `reset` and the password.
std::vector<std::string> base_line_rules() {
  std::istringstream line(acl_lines().at(0).substr(std::string("valkey-cli ACL SETUSER emq ").size()));
  std::vector<std::string> rules;
  for (std::string word; line >> word;) {
    std::string rule;
    for (char c : word) {
      if (c != '\'' && c != '\\') rule += c;
    }
    if (rule != "reset" && rule != ">" + kPassword) rules.push_back(rule);
  }
  return rules;
}

TEST(AclAccessString, IsTheBaseLinesRulesWithoutResetOrThePassword) {
  ASSERT_FALSE(acl_lines().empty()) << "docs/production.md has no valkey-cli ACL SETUSER line";
  EXPECT_EQ(access_string(), base_line_rules());
}

enum class MadeBy { Scripts, Module, AccessString };

class Acl : public ::testing::TestWithParam<MadeBy> {
 protected:
  Acl() : server(options()) {}
  static ValkeyServer::Options options() {
    ValkeyServer::Options o;
    o.load_module = GetParam() == MadeBy::Module;
    return o;
  }
  bool native() const { return GetParam() == MadeBy::Module; }

  // Creates the user: each line through bash as the page has it, the only
  // change being valkey-cli's address (the suite's server, not 6379); or
  // the access string's rules, then the password, as an API sets them.
  void create_user() {
    if (GetParam() == MadeBy::AccessString) {
      std::vector<std::string> args = {"ACL", "SETUSER", "emq"};
      for (const std::string& rule : access_string()) args.push_back(rule);
      args.push_back(">" + kPassword);
      ASSERT_EQ(server.cli(args), "OK\n");
      return;
    }
    const std::vector<std::string> lines = acl_lines();
    ASSERT_EQ(lines.size(), 2u) << "docs/production.md: the base line and the module's line";
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i == 1 && !native()) continue;  // "only when the server loads the emq module"
      std::string line = lines[i];
      line.replace(0, std::string("valkey-cli").size(), "valkey-cli -s " + server.socket_path());
      RunResult r = run_program({"/bin/bash", "-c", line});
      ASSERT_EQ(r.code, 0) << line << "\n" << r.err;
      ASSERT_EQ(r.out, "OK\n") << line;
    }
  }

  std::string user_url() const { return "valkey://emq@127.0.0.1:" + std::to_string(server.port()) + "/0"; }
  RunResult emq(std::vector<std::string> args) {
    args.insert(args.begin(), emq_binary());
    return run_program(args, "", {"EMQ_URL=" + user_url(), "EMQ_PASSWORD=" + kPassword});
  }
  // The server's ACL LOG, "" when it recorded no refusal (valkey-cli
  // prints an empty array as an empty line).
  std::string acl_log() const {
    std::string log = server.cli({"ACL", "LOG"});
    while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
    return log;
  }

  ValkeyServer server;
};

TEST_P(Acl, AWholeCaseRunsAsTheLeastPrivilegeUser) {
  create_user();
  // The page: this user may not CONFIG SET, so the server publishes the
  // keyspace events itself.
  server.cli({"CONFIG", "SET", "notify-keyspace-events", "Kz"});

  RunResult work = emq({"enqueue", "work", "hello"});
  ASSERT_EQ(work.code, 0) << work.err;
  const std::string work_id = work.out.substr(0, work.out.find('\n'));
  RunResult bad = emq({"enqueue", "bad", "x"});
  ASSERT_EQ(bad.code, 0) << bad.err;
  const std::string bad_id = bad.out.substr(0, bad.out.find('\n'));

  // lease_ms 1000 and a 1.5 s job: the renewer extends its lease.
  const std::string runs = server.dir() + "/bad-runs";
  EmqdProcess d("valkey:\n  url: " + user_url() +
                    "\n  password_env: EMQ_VALKEY_PASSWORD\n  keyspace_events: true\n"
                    "metrics:\n  listen: \"\"\nlog:\n  level: debug\nreaper:\n  interval_ms: 100\n"
                    "daemon:\n  beat_s: 0.5\n"
                    "queues:\n"
                    "  - name: work\n    lease_ms: 1000\n    keep_completed_s: 60\n"
                    "    groups: { default: { weight: 2 }, overrides: { acme: { max_active: 3 } } }\n"
                    "    handler:\n      type: exec\n"
                    "      command: [\"/bin/sh\", \"-c\", \"sleep 1.5; cat\"]\n"
                    "  - name: bad\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                    "      command: [\"/bin/sh\", \"-c\", \"echo run >> " +
                    runs + "; echo no good >&2; exit 65\"]\n",
                {}, {"EMQ_VALKEY_PASSWORD=" + kPassword});
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_NE(d.log().find(native() ? "executor native" : "executor scripted"), std::string::npos) << d.log();

  RunResult waited = emq({"wait", "work", work_id, "--timeout", "30"});
  EXPECT_EQ(waited.code, 0) << waited.err;
  EXPECT_EQ(waited.out, "hello");
  RunResult died = emq({"wait", "bad", bad_id, "--timeout", "30"});
  EXPECT_EQ(died.code, 1) << died.err;

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"stats"},
                                             {"stats", "work", "--json"},
                                             {"queues"},
                                             {"inspect", "work", work_id},
                                             {"jobs", "bad", "--state", "dead"},
                                             {"dead", "list", "bad"},
                                             {"pause", "work"},
                                             {"pause", "work", "--reason", "r", "--for", "1h"},
                                             {"resume", "work"},
                                             {"daemons", "--jobs"},
                                             {"daemons", "--json"},
                                             {"enqueue", "work", "g", "--group", "acme"},
                                             {"groups", "work"},
                                             {"group", "set", "work", "acme", "--weight", "3"},
                                             {"group", "pause", "work", "acme"},
                                             {"group", "resume", "work", "acme"}}) {
    RunResult r = emq(args);
    EXPECT_EQ(r.code, 0) << "emq " << args[0] << ": " << r.err;
  }
  RunResult retried = emq({"dead", "retry", "bad", bad_id});
  EXPECT_EQ(retried.code, 0) << retried.err;
  // It runs again, and dies again: the claim after a retry, through the user.
  const std::string row = QueueKeys("bad").row(bad_id);
  ASSERT_TRUE(wait_for(
      [&] {
        return read_ledger(runs).lines == 2 && server.cli({"HGET", row, "state"}) == "dead\n";
      },
      seconds(30)))
      << server.cli({"HGET", row, "state"}) << d.log();

  // The fleet: the daemon beats into the registry, and answers a quiet.
  RunResult quiet = emq({"daemons", "quiet", "--all"});
  EXPECT_EQ(quiet.code, 0) << quiet.out << quiet.err;
  EXPECT_NE(quiet.out.find(": quiet (answered in "), std::string::npos) << quiet.out;

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
  EXPECT_EQ(d.log().find("NOPERM"), std::string::npos) << d.log();
  EXPECT_EQ(d.log().find("heartbeat: a beat"), std::string::npos) << d.log();
  EXPECT_EQ(acl_log(), "") << "the server refused a command the page does not grant";

  // And the log check can fail: a refused command is in it.
  RunResult flush = run_program(
      {"/bin/bash", "-c",
       "valkey-cli -s " + server.socket_path() + " --user emq --pass " + kPassword + " FLUSHALL 2>/dev/null"});
  EXPECT_NE(flush.out.find("NOPERM"), std::string::npos) << flush.out << flush.err;
  EXPECT_NE(acl_log(), "");
}

INSTANTIATE_TEST_SUITE_P(Executors, Acl, ::testing::Values(MadeBy::Scripts, MadeBy::Module, MadeBy::AccessString),
                         [](const auto& p) {
                           switch (p.param) {
                             case MadeBy::Module: return std::string("Native");
                             case MadeBy::AccessString: return std::string("FromTheAccessString");
                             case MadeBy::Scripts: break;
                           }
                           return std::string("Scripted");
                         });

}  // namespace
}  // namespace echomq::test
