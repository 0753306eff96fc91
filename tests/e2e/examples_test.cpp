// Every example handler in examples/ run by the real emqd, as
// examples/README.md and docs/handlers.md promise: each does what the
// README's table says, through a real server. A new file in examples/
// without a row here fails ExamplesTest.EveryExampleIsRunHere.
#include <filesystem>
#include <set>

#include "e2e_fixture.h"
#include "otlp_receiver.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(EMQ_SOURCE_DIR) / "examples";

struct Example {
  std::string file;  // under examples/
  std::string queue;
  std::string handler_yaml;
};

std::string exec_handler(const std::string& command) {
  return "      type: exec\n      command: " + command + "\n      timeout_s: 10\n      env: { RELAY: relay.test }\n";
}
std::string pool_handler(const std::string& command) { return "      type: pool\n      command: " + command + "\n"; }
std::string plugin_handler(const std::string& library) {
  return "      type: plugin\n      path: " + std::string(EMQ_LIB_DIR) + "/" + library + "\n";
}

// The service traced_curl.sh calls: the test receiver answers "ok".
std::vector<Example> examples(const std::string& service_url) {
  const std::string dir = kExamples.string();
  const std::string node_modules = std::string(EMQ_SOURCE_DIR) + "/clients/node/node_modules";
  return {
      {"handlers/exec/send_email.sh", "email", exec_handler("[\"" + dir + "/handlers/exec/send_email.sh\"]")},
      // Without tracing: no context, so a root span of its own, sent nowhere.
      {"handlers/exec/traced_upper.js", "traced_js",
       "      type: exec\n      command: [\"/usr/bin/node\", \"" + dir +
           "/handlers/exec/traced_upper.js\"]\n      env: { NODE_PATH: \"" + node_modules +
           "\", OTEL_EXPORTER_OTLP_ENDPOINT: \"" + service_url + "\" }\n"},
      {"handlers/exec/traced_curl.sh", "traced_sh",
       "      type: exec\n      command: [\"" + dir + "/handlers/exec/traced_curl.sh\"]\n      env: { SERVICE_URL: \"" +
           service_url + "/resize\" }\n"},
      {"handlers/exec/word_count.py", "words",
       exec_handler("[\"/usr/bin/python3\", \"" + dir + "/handlers/exec/word_count.py\"]")},
      {"handlers/pool/echo_upper.py", "upper_py",
       pool_handler("[\"/usr/bin/python3\", \"" + dir + "/handlers/pool/echo_upper.py\"]")},
      {"handlers/pool/echo_upper.js", "upper_js",
       pool_handler("[\"/usr/bin/node\", \"" + dir + "/handlers/pool/echo_upper.js\"]")},
      {"handlers/pool/echo.sh", "echo_sh", pool_handler("[\"/bin/sh\", \"" + dir + "/handlers/pool/echo.sh\"]")},
      {"plugins/noop.c", "noop", plugin_handler("libemq_noop.so")},
      {"plugins/sha256.c", "sha256", plugin_handler("libemq_sha256.so")},
  };
}

class ExamplesTest : public E2E {
 protected:
  std::string config() {
    std::string yaml = config_head(server);
    for (const Example& e : examples(service.endpoint())) {
      yaml += "  - name: " + e.queue +
              "\n    max_attempts: 3\n    keep_completed_s: 300\n"
              "    backoff: { initial_ms: 50, multiplier: 1.0, max_ms: 50, jitter: 0 }\n    handler:\n" +
              e.handler_yaml;
    }
    return yaml;
  }
  // The row once the job has completed or died.
  OtlpReceiver service;
  std::map<std::string, std::string> ended(const std::string& queue, const std::string& id) {
    std::map<std::string, std::string> r;
    wait_for(
        [&] {
          r = row(queue, id);
          return r["state"] == "completed" || r["state"] == "dead";
        },
        seconds(30));
    return r;
  }
};

TEST_F(ExamplesTest, EveryExampleIsRunHere) {
  std::set<std::string> listed;
  for (const Example& e : examples("")) listed.insert(e.file);
  for (const auto& entry : fs::recursive_directory_iterator(kExamples)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), kExamples).string();
    if (rel == "README.md" || rel == "CMakeLists.txt") continue;
    EXPECT_EQ(listed.count(rel), 1u) << "examples/" << rel << " is not run by tests/e2e/examples_test.cpp";
  }
}

TEST_F(ExamplesTest, EachDoesWhatTheReadmeSays) {
  EmqdProcess d(config());
  ASSERT_TRUE(d.wait_ready()) << d.log();

  // exec, POSIX sh: sends, retries a flaky first attempt (exit 75), and
  // sends a payload with no address to dead (exit 65).
  const std::string sent = put("email", "ada@example.com");
  const std::string flaky = put("email", "bob@example.com flaky");
  const std::string no_address = put("email", "not-an-address");
  // exec, Python: counts words as JSON; fails a first attempt of retry-me.
  const std::string counted = put("words", "to the moon and back");
  const std::string retry_me = put("words", "the fox retry-me");
  // pool: upper-cases (Python, Node) or echoes (sh); an empty payload is
  // failed for good.
  const std::string py = put("upper_py", "abc");
  const std::string py_empty = put("upper_py", "");
  const std::string js = put("upper_js", "abc");
  const std::string sh = put("echo_sh", "abc");
  // exec, traced: Node with OpenTelemetry's SDK, and sh passing the trace to curl.
  const std::string traced_js = put("traced_js", "abc");
  const std::string traced_sh = put("traced_sh", "abc");
  // plugins: an empty result; the payload's SHA-256 in hex.
  const std::string noop = put("noop", "anything");
  const std::string sha = put("sha256", "abc");

  auto r = ended("email", sent);
  EXPECT_EQ(r["state"], "completed") << d.log();
  EXPECT_EQ(r["result"].rfind("sent to ada@example.com by relay.test (job " + sent + ", attempt 1)", 0), 0u)
      << r["result"];
  r = ended("email", flaky);
  EXPECT_EQ(r["state"], "completed") << d.log();
  EXPECT_EQ(r["attempts"], "2");
  r = ended("email", no_address);
  EXPECT_EQ(r["state"], "dead") << d.log();
  EXPECT_EQ(r["attempts"], "1") << "exit 65 is permanent";
  EXPECT_EQ(r["error"], "exit code 65: no address in payload: not-an-address");

  r = ended("words", counted);
  EXPECT_EQ(r["state"], "completed") << d.log();
  EXPECT_EQ(r["result"], "{\"words\": 5, \"longest\": \"moon\"}");
  r = ended("words", retry_me);
  EXPECT_EQ(r["state"], "completed") << d.log();
  EXPECT_EQ(r["attempts"], "2");

  r = ended("upper_py", py);
  EXPECT_EQ(r["result"], "ABC") << d.log();
  r = ended("upper_py", py_empty);
  EXPECT_EQ(r["state"], "dead") << d.log();
  EXPECT_EQ(r["error"], "empty payload: nothing to upper-case");
  r = ended("upper_js", js);
  EXPECT_EQ(r["result"], "ABC") << d.log();
  r = ended("echo_sh", sh);
  EXPECT_EQ(r["result"], "abc") << d.log();
  r = ended("traced_js", traced_js);
  EXPECT_EQ(r["result"], "ABC") << d.log();
  r = ended("traced_sh", traced_sh);
  EXPECT_EQ(r["result"], "ok") << d.log();

  r = ended("noop", noop);
  EXPECT_EQ(r["state"], "completed") << d.log();
  EXPECT_EQ(r["result"], "");
  r = ended("sha256", sha);
  EXPECT_EQ(r["result"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") << d.log();

  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(20)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
