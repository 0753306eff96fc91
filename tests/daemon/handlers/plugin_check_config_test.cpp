// A plugin that cannot be used is refused before anything starts: by
// `emqd --check-config` and by a starting emqd alike (exit 2), each bad
// library named with its queue and what is wrong with it.
#include "handlers/plugin_library.h"
#include "handler_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "emqd_process.h"
#include "process_probe.h"

namespace echomq::daemon {
namespace {

using test_support::example_plugin;
using test_support::test_plugin;
using ::testing::HasSubstr;
using ::testing::Not;

QueueConfig plugin_queue(const std::string& name, const std::string& path) {
  QueueConfig q;
  q.name = name;
  q.handler.type = HandlerConfig::Type::Plugin;
  q.handler.path = path;
  return q;
}

TEST(PluginLibraryProblems, NameEachBadQueueAndSkipTheRest) {
  Config config;
  config.path = "/etc/echomq/emqd.yaml";
  QueueConfig exec;
  exec.name = "emails";
  exec.handler.command = {"/bin/cat"};
  config.queues = {exec, plugin_queue("fast", example_plugin("sha256")), plugin_queue("old", test_plugin("wrong_abi")),
                   plugin_queue("gone", "/nonexistent/libgone.so")};
  const std::vector<std::string> problems = plugin_library_problems(config);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "/etc/echomq/emqd.yaml: queues[2].handler.path: queue old: plugin " +
                             test_plugin("wrong_abi") +
                             " was built for plugin ABI 2, but this emqd speaks ABI 1; rebuild it against this "
                             "emqd's echomq/plugin.h");
  EXPECT_THAT(problems[1], HasSubstr("/etc/echomq/emqd.yaml: queues[3].handler.path: queue gone: cannot load plugin "
                                     "/nonexistent/libgone.so: No such file or directory"));
}

class CheckConfig : public ::testing::Test {
 protected:
  // emqd --check-config on a file with one plugin queue per path.
  test::RunResult check(const std::vector<std::string>& paths) {
    std::string yaml = "queues:\n";
    for (std::size_t i = 0; i < paths.size(); ++i) {
      yaml += "  - name: q" + std::to_string(i) + "\n    handler:\n      type: plugin\n      path: " + paths[i] + "\n";
    }
    file_ = dir_.path() + "/emqd.yaml";
    std::ofstream(file_) << yaml;
    return test::run_program({test::emqd_binary(), "--check-config", "--config", file_});
  }

  test::TempDir dir_;
  std::string file_;
};

TEST_F(CheckConfig, AcceptsTheExamplePlugins) {
  const test::RunResult r = check({example_plugin("noop"), example_plugin("sha256")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("plugin " + example_plugin("sha256")));
}

TEST_F(CheckConfig, ReportsAMissingSymbolAWrongAbiAndANonPluginAtOnce) {
  const test::RunResult r =
      check({test_plugin("missing_handle"), test_plugin("wrong_abi"), test_plugin("no_abi"), example_plugin("noop")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(file_ + ": queues[0].handler.path: queue q0: plugin " + test_plugin("missing_handle") +
                               " does not export emq_plugin_handle"));
  EXPECT_THAT(r.err, HasSubstr(file_ + ": queues[1].handler.path: queue q1: plugin " + test_plugin("wrong_abi") +
                               " was built for plugin ABI 2, but this emqd speaks ABI 1"));
  EXPECT_THAT(r.err, HasSubstr(file_ + ": queues[2].handler.path: queue q2: plugin " + test_plugin("no_abi") +
                               " is not an emqd plugin"));
  EXPECT_THAT(r.err, Not(HasSubstr("queues[3]")));
  EXPECT_THAT(r.err, HasSubstr("emqd: 3 problem(s) in " + file_ + "; nothing was started"));
}

TEST_F(CheckConfig, ReportsAMissingFile) {
  const test::RunResult r = check({dir_.path() + "/libmissing.so"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(": queues[0].handler.path: "));
  EXPECT_THAT(r.err, HasSubstr("libmissing.so does not exist"));
}

TEST_F(CheckConfig, AStartingDaemonRefusesABadPluginTheSameWay) {
  check({test_plugin("wrong_abi")});
  const test::RunResult r = test::run_program({test::emqd_binary(), "--config", file_});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("queues[0].handler.path: queue q0: plugin " + test_plugin("wrong_abi") +
                               " was built for plugin ABI 2"));
}

}  // namespace
}  // namespace echomq::daemon
