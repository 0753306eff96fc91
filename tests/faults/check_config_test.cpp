// The real `emqd --check-config` on every bad configuration of the corpus
// (tests/configs/bad/): exit 2, every problem the loader finds printed as
// FILE:LINE: KEY: what was expected, the closing line saying nothing was
// started, and nothing else: no crash, no signal, no sanitizer report.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "config.h"
#include "fault_fixture.h"

namespace echomq::test {
namespace {

std::vector<std::string> bad_files() {
  std::vector<std::string> files;
  for (const auto& dir : {"/bad", "/bad/multiple"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(EMQ_TEST_CONFIGS) + dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> loader_errors(const std::string& path) {
  try {
    daemon::load_config(path);
  } catch (const daemon::ConfigError& e) {
    return e.errors();
  }
  return {};
}

TEST(CheckConfigCorpus, EveryBadFileIsRefusedWithExitTwoNamingFileLineAndKey) {
  // password_env_unset.yaml names a variable that must not be set.
  ::unsetenv("EMQ_TEST_SURELY_UNSET_PASSWORD");
  const std::vector<std::string> files = bad_files();
  ASSERT_GE(files.size(), 69u);
  std::size_t errors_seen = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    RunResult r = run_program({emqd_binary(), "--check-config", "--config", path});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing on stdout for a refused file: " << r.out;

    const std::vector<std::string> want = loader_errors(path);
    ASSERT_FALSE(want.empty()) << "the loader accepts this file";
    std::string expected;
    for (const std::string& e : want) expected += e + "\n";
    expected += "emqd: " + std::to_string(want.size()) + " problem(s) in " + path + "; nothing was started\n";
    EXPECT_EQ(r.err, expected) << "stderr should hold the loader's errors and nothing else";

    const std::regex shape("^" + std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                           R"(:[1-9][0-9]*: [^ :]+: .{8,})");
    for (const std::string& e : want) {
      EXPECT_TRUE(std::regex_search(e, shape)) << "not FILE:LINE: KEY: what: " << e;
      ++errors_seen;
    }
  }
  report_figures("emqd --check-config on the bad corpus",
                 "files=" + std::to_string(files.size()) + " exit2=all errors=" + std::to_string(errors_seen) +
                     " crashes=0");
}

}  // namespace
}  // namespace echomq::test
