// docs/cli.md's `console` blocks, run as a reader would type them: each
// block against a fresh server of its own, each `$ ` line through bash with
// this build's emq first on PATH, and what it prints compared with what the
// page shows under it: lines that start `emq: ` are stderr, the others
// stdout (blanks at a line's end aside, which a page cannot show).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "doc_text.h"
#include "emqd_process.h"
#include "valkey_server.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

struct Step {
  std::string command;
  std::string out;  // as the page shows it
  std::string err;
};

std::string without_trailing_blanks(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::vector<Step> steps_of(const std::string& body) {
  std::vector<Step> steps;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("$ ", 0) == 0) {
      steps.push_back({line.substr(2), "", ""});
    } else if (steps.empty()) {
      throw std::runtime_error("a console block must start with a `$ ` line: " + line);
    } else {
      (line.rfind("emq: ", 0) == 0 ? steps.back().err : steps.back().out) += line + "\n";
    }
  }
  return steps;
}

TEST(CliDocBlocks, EachConsoleBlockPrintsWhatThePageShows) {
  const std::string page = std::string(EMQ_SOURCE_DIR) + "/docs/cli.md";
  int blocks = 0;
  const std::string path = fs::path(emq_binary()).parent_path().string() + ":" + std::getenv("PATH");
  for (const DocBlock& block : fenced_blocks(page)) {
    if (block.lang != "console") continue;
    ++blocks;
    ValkeyServer server;
    for (const Step& step : steps_of(block.body)) {
      const RunResult r =
          run_program({"/bin/bash", "-c", step.command}, "", {"EMQ_URL=" + server.url(), "PATH=" + path});
      const std::string where =
          "docs/cli.md:" + std::to_string(block.line) + " (" + block.heading + "): $ " + step.command;
      EXPECT_EQ(without_trailing_blanks(r.out), step.out) << where;
      EXPECT_EQ(without_trailing_blanks(r.err), step.err) << where;
    }
  }
  // emq search's and emq cancel's, at least.
  EXPECT_GE(blocks, 2) << "docs/cli.md has fewer console blocks than this test was written for";
}

}  // namespace
}  // namespace echomq::test
