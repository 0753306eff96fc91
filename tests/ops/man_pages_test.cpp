// The manual pages emqd(1) and emq(1), made from this build as the .deb
// makes them (packaging/man/make-pages.sh, which debian/rules runs): each
// has the sections a reader of `man emqd` looks for, each holding what it
// should, and none shows a formatting slip of --help.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "ops_files.h"

namespace echomq::test {
namespace {

// The page's sections by their .SH name, each its roff text.
std::map<std::string, std::string> sections(const std::string& roff) {
  std::map<std::string, std::string> out;
  std::istringstream in(roff);
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(".SH ", 0) == 0) {
      current = line.substr(4);
      if (current.size() > 1 && current.front() == '"') current = current.substr(1, current.size() - 2);
      out[current];
    } else if (!current.empty()) {
      out[current] += line + "\n";
    }
  }
  return out;
}

class ManPages : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TOOL_INSTALLED("help2man", "help2man");
    const RunResult made = run_program(
        {(source_dir() / "packaging/man/make-pages.sh").string(), std::string(EMQ_BIN_DIR), dir_.path().string()});
    ASSERT_EQ(made.code, 0) << made.out << made.err;
  }
  std::string roff(const std::string& name) { return read_text(dir_.path() / (name + ".1")); }
  std::map<std::string, std::string> page(const std::string& name) { return sections(roff(name)); }

  TempDir dir_;
};

TEST_F(ManPages, EmqdHasItsFilesSignalsExitStatusEnvironmentAndSeeAlso) {
  auto s = page("emqd");
  for (const char* name :
       {"NAME", "SYNOPSIS", "OPTIONS", "FILES", "SIGNALS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"}) {
    EXPECT_TRUE(s.count(name)) << "emqd.1 has no " << name;
  }
  EXPECT_NE(s["FILES"].find("/etc/echomq/emqd.yaml"), std::string::npos) << s["FILES"];
  for (const char* sig : {"SIGTERM", "SIGTSTP", "SIGHUP"}) EXPECT_NE(s["SIGNALS"].find(sig), std::string::npos) << sig;
  for (const char* code : {".B 0\n", ".B 1\n", ".B 2\n"}) EXPECT_NE(s["EXIT STATUS"].find(code), std::string::npos);
  EXPECT_NE(s["ENVIRONMENT"].find("NOTIFY_SOCKET"), std::string::npos);
  EXPECT_NE(s["SEE ALSO"].find(".BR emq (1)"), std::string::npos);
  EXPECT_NE(s["OPTIONS"].find("check\\-config"), std::string::npos) << "the options come from --help";
}

TEST_F(ManPages, EmqHasItsFilesSignalsExitStatusEnvironmentAndSeeAlso) {
  auto s = page("emq");
  for (const char* name : {"NAME", "SYNOPSIS", "FILES", "SIGNALS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"}) {
    EXPECT_TRUE(s.count(name)) << "emq.1 has no " << name;
  }
  // Every exit code docs/cli.md lists, and every variable emq reads.
  for (const char* code : {".B 0\n", ".B 1\n", ".B 2\n", ".B 3\n", ".B 4\n", ".B 5\n"}) {
    EXPECT_NE(s["EXIT STATUS"].find(code), std::string::npos) << code;
  }
  for (const char* var : {"EMQ_URL", "EMQ_PASSWORD", "EMQ_TLS_CA", "EMQ_EXECUTOR", "EMQ_WEB_PASSWORD"}) {
    EXPECT_NE(s["ENVIRONMENT"].find(var), std::string::npos) << var;
  }
  EXPECT_NE(s["SEE ALSO"].find(".BR emqd (1)"), std::string::npos);
}

// CLI11 prints a validator's name after the option's type: a validator
// named as the type read `--executor MODE:MODE`.
TEST_F(ManPages, NoOptionShowsItsTypeTwice) {
  const std::string emq = roff("emq");
  const RunResult help = run_program({std::string(EMQ_BIN_DIR) + "/emq", "--help"});
  for (const std::string& text : {emq, help.out}) {
    EXPECT_EQ(text.find("MODE:MODE"), std::string::npos) << text;
  }
  EXPECT_NE(help.out.find("--executor MODE "), std::string::npos) << help.out;
}

}  // namespace
}  // namespace echomq::test
