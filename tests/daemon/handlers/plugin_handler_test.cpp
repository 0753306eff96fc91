// The plugin kind with real shared libraries: the example plugins
// (examples/plugins: noop, sha256) and fixtures that misbehave on purpose
// (tests/plugins). Loading checks the ABI number and every function before
// use; a plugin that throws, returns an unknown code or writes a bad result
// fails that job and nothing else; handle() runs on many threads at once.
#include "handlers/plugin_handler.h"
#include "handler_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emqd_process.h"
#include "process_probe.h"

namespace echomq::daemon {
namespace {

using test_support::every_byte;
using test_support::example_plugin;
using test_support::test_plugin;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Verdict = Outcome::Verdict;
using Clock = std::chrono::steady_clock;

// The reference: coreutils' sha256sum on the same bytes.
std::string sha256sum(const std::string& bytes) {
  const test::RunResult r = test::run_program({"/usr/bin/sha256sum"}, bytes);
  return r.out.substr(0, 64);
}

Job job(std::string payload, int n = 1) {
  Job j;
  j.queue = "digest";
  j.id = "JOB_" + std::to_string(n);
  j.attempt = 1;
  j.payload = std::move(payload);
  return j;
}

class PluginHandlerTest : public ::testing::Test {
 protected:
  static HandlerConfig config(const std::string& path, std::string json = "{}") {
    HandlerConfig c;
    c.type = HandlerConfig::Type::Plugin;
    c.path = path;
    c.plugin_config_json = std::move(json);
    return c;
  }
  static std::unique_ptr<PluginHandler> start(HandlerConfig c) {
    auto h = std::make_unique<PluginHandler>(PluginHandler::Params{"digest", std::move(c)});
    h->start();
    return h;
  }
  static Outcome run(PluginHandler& h, const Job& j) {
    StopToken stop;
    return h.run(j, stop);
  }
  // What start() says about a library that cannot be used.
  static std::string start_error(HandlerConfig c) {
    PluginHandler h({"digest", std::move(c)});
    try {
      h.start();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(start() succeeded)";
  }

  test::LogCapture logs_;
};

TEST_F(PluginHandlerTest, NoopCompletesEveryJobWithAnEmptyResult) {
  auto h = start(config(example_plugin("noop")));
  for (const std::string& payload : {std::string(""), std::string("anything"), every_byte()}) {
    const Outcome out = run(*h, job(payload));
    EXPECT_EQ(out.verdict, Verdict::Complete);
    EXPECT_EQ(out.result, "");
  }
}

TEST_F(PluginHandlerTest, Sha256MatchesTheStandardVectorsAndSha256sum) {
  auto h = start(config(example_plugin("sha256")));
  EXPECT_EQ(run(*h, job("")).result, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(run(*h, job("abc")).result, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(run(*h, job("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).result,
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(run(*h, job(std::string(1000000, 'a'))).result,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Every byte value, NUL included, and the block-boundary lengths.
  for (std::size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 256u, 1024u}) {
    const std::string payload = every_byte(4).substr(0, n);
    EXPECT_EQ(run(*h, job(payload)).result, sha256sum(payload)) << n << " bytes";
  }
}

TEST_F(PluginHandlerTest, Sha256FromEightThreadsAtOnceGivesEveryJobItsOwnDigest) {
  auto h = start(config(example_plugin("sha256")));
  std::mt19937 gen(7);
  std::vector<std::string> payloads;
  for (int i = 0; i < 64; ++i) {
    std::string p(gen() % 5000, '\0');
    for (char& c : p) c = static_cast<char>(gen() & 0xff);
    payloads.push_back(std::move(p));
  }
  std::vector<std::string> expected;
  for (const auto& p : payloads) expected.push_back(sha256sum(p));

  std::atomic<int> wrong{0};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t k = static_cast<std::size_t>(t * 200 + i) % payloads.size();
        StopToken stop;
        const Outcome out = h->run(job(payloads[k], t * 1000 + i), stop);
        if (out.verdict != Verdict::Complete || out.result != expected[k]) ++wrong;
        ++done;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(done.load(), 1600);
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(PluginHandlerTest, BinaryPayloadsAndResultsAreByteExact) {
  auto h = start(config(test_plugin("misbehaves")));
  const std::string bytes = every_byte(8);
  const Outcome out = run(*h, job(bytes));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_TRUE(out.result == bytes) << "the echoed bytes differ";
}

TEST_F(PluginHandlerTest, FailuresTheyReportRetryOrGoToDead) {
  auto h = start(config(test_plugin("misbehaves")));
  Outcome out = run(*h, job("retry"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "misbehaves: try again later");
  out = run(*h, job("permanent"));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "misbehaves: this job can never work");
  out = run(*h, job("long-error"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, std::string(PluginHandler::kMaxErrorBytes, 'e'));
}

TEST_F(PluginHandlerTest, AnExceptionFailsTheJobNotTheDaemon) {
  auto h = start(config(test_plugin("misbehaves")));
  Outcome out = run(*h, job("throw"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "emq_plugin_handle threw: misbehaves: thrown on purpose");
  out = run(*h, job("throw-int"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "emq_plugin_handle threw an exception that is not a std::exception");
  EXPECT_TRUE(logs_.contains("a plugin must not let exceptions out"));
  EXPECT_EQ(run(*h, job("still here")).result, "still here");
}

TEST_F(PluginHandlerTest, GarbageAnswersFailTheJob) {
  HandlerConfig c = config(test_plugin("misbehaves"));
  c.max_output_bytes = 100000;
  auto h = start(c);
  Outcome out = run(*h, job("code"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error,
            "emq_plugin_handle returned 7, which is none of EMQ_PLUGIN_OK (0), EMQ_PLUGIN_RETRY (1), "
            "EMQ_PLUGIN_PERMANENT (2)");
  out = run(*h, job("null"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "the plugin wrote its result from a NULL pointer");
  out = run(*h, job("huge"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "the plugin's result exceeded max_output_bytes (100000)");
  EXPECT_EQ(out.result, "");
  EXPECT_EQ(run(*h, job("still here")).result, "still here");
}

TEST_F(PluginHandlerTest, OnAStopTheCallRunsOnButItsAnswerIsDiscarded) {
  auto h = start(config(test_plugin("misbehaves")));
  StopToken stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    stop.request();
  });
  const Outcome out = h->run(job("slow"), stop);
  stopper.join();
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "stopped by the daemon (the plugin's answer was discarded)");
  EXPECT_EQ(out.result, "");
}

// The host table's trace_context, added after report_progress: a plugin
// built against it finds the job's context there ("" while emqd does not
// trace); one built before reads only the members before it.
TEST_F(PluginHandlerTest, TheJobsTraceContextReachesAPluginThroughTheHostTable) {
  auto h = start(config(test_plugin("trace_context")));
  Job traced = job("x");
  traced.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  traced.tracestate = "vendor=opaque";
  Outcome o = run(*h, traced);
  EXPECT_EQ(o.verdict, Verdict::Complete);
  EXPECT_EQ(o.result, traced.traceparent + "|vendor=opaque");
  EXPECT_EQ(run(*h, job("y", 2)).result, "|") << "no context: two empty strings";
  static_assert(offsetof(emq_host, report_progress) == sizeof(std::size_t),
                "the members an ABI-1 plugin built before trace_context reads stay where they were");
}

TEST_F(PluginHandlerTest, CreateFailingCleanlyRefusesTheStartWithItsMessage) {
  EXPECT_EQ(start_error(config(test_plugin("create_fails"), R"({"a":1})")),
            "queue digest: plugin handler: emq_plugin_create failed for " + test_plugin("create_fails") +
                ": create_fails wants a \"threshold\" key; got {\"a\":1} (check the queue's handler.config)");
}

TEST_F(PluginHandlerTest, CreateThrowingRefusesTheStart) {
  EXPECT_EQ(start_error(config(test_plugin("misbehaves"), R"({"throw":true})")),
            "queue digest: plugin handler: emq_plugin_create threw (a plugin must not let exceptions out): "
            "misbehaves: create threw on purpose");
}

TEST_F(PluginHandlerTest, ShutdownDestroysTheState) {
  test::TempDir dir;
  const std::string marker = dir.path() + "/destroyed";
  auto h = start(config(test_plugin("misbehaves"), R"({"marker":")" + marker + "\"}"));
  EXPECT_EQ(run(*h, job("x")).result, "x");
  EXPECT_FALSE(std::filesystem::exists(marker));
  h->shutdown();
  EXPECT_TRUE(std::filesystem::exists(marker));
  const Outcome after = run(*h, job("x"));
  EXPECT_EQ(after.verdict, Verdict::Retry);
}

// Each library a loader must refuse, and what it says.
struct BadLibrary {
  std::string path;
  std::string says;
};

class PluginLoadErrors : public ::testing::TestWithParam<BadLibrary> {};

TEST_P(PluginLoadErrors, AreRefusedWithAClearMessage) {
  const BadLibrary& bad = GetParam();
  try {
    PluginLibrary library(bad.path);
    FAIL() << bad.path << " was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad.says));
  }
  EXPECT_THAT(plugin_library_problem(bad.path), HasSubstr(bad.says));
}

INSTANTIATE_TEST_SUITE_P(
    EachWay, PluginLoadErrors,
    ::testing::Values(
        BadLibrary{"/nonexistent/libplugin.so",
                   "cannot load plugin /nonexistent/libplugin.so: No such file or directory; build the plugin or "
                   "fix handler.path"},
        BadLibrary{std::string(EMQ_SOURCE_DIR) + "/examples/plugins/noop.c", "invalid ELF header"},
        BadLibrary{test_plugin("no_abi"), "is not an emqd plugin: it does not export emq_plugin_abi_version"},
        BadLibrary{test_plugin("wrong_abi"),
                   "was built for plugin ABI 2, but this emqd speaks ABI 1; rebuild it against this emqd's "
                   "echomq/plugin.h"},
        BadLibrary{test_plugin("missing_handle"), "does not export emq_plugin_handle, which plugin ABI 1 requires"},
        BadLibrary{test_plugin("unresolved_symbol"), "undefined symbol: emq_test_no_such_function"}));

TEST(PluginLibrary, TheExamplesLoadAndExportOnlyTheAbi) {
  for (const std::string name : {"noop", "sha256"}) {
    EXPECT_EQ(plugin_library_problem(example_plugin(name)), "") << name;
    // -fvisibility=hidden: the four functions and nothing else.
    const test::RunResult nm = test::run_program({"/usr/bin/nm", "-D", "--defined-only", example_plugin(name)});
    std::vector<std::string> symbols;
    std::istringstream lines(nm.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(" T ") != std::string::npos) symbols.push_back(line.substr(line.rfind(' ') + 1));
    }
    std::sort(symbols.begin(), symbols.end());
    EXPECT_EQ(symbols, (std::vector<std::string>{"emq_plugin_abi_version", "emq_plugin_create", "emq_plugin_destroy",
                                                 "emq_plugin_handle"}))
        << name;
  }
}

TEST(PluginLibrary, StartReportsTheSameProblemsForItsQueue) {
  HandlerConfig c;
  c.type = HandlerConfig::Type::Plugin;
  c.path = test_plugin("wrong_abi");
  PluginHandler h({"digest", c});
  try {
    h.start();
    FAIL() << "start() accepted a plugin of another ABI";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), StartsWith("queue digest: plugin handler: plugin " + c.path + " was built for plugin ABI 2"));
  }
}

}  // namespace
}  // namespace echomq::daemon
