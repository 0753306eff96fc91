// README.md's "A first queue", run as a newcomer pastes it after
// `make demo`: the block is taken from the README's text as written. Two
// substitutions, and only these: a free port for 6379 (the suite must not
// touch a server of the machine's own), and this build's bin/ for
// $PWD/build/bin (the block runs in a temporary directory, not in the
// source tree, where it would write emqd.yaml). Each must be found.
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "doc_text.h"
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

std::string quick_start_block() {
  return fenced_block((fs::path(EMQ_SOURCE_DIR) / "README.md").string(), "## A first queue", "sh");
}

// Replaces every `from` with `to`; throws when there is none.
std::string substitute(std::string text, const std::string& from, const std::string& to) {
  std::size_t n = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()), ++n) {
    text.replace(at, from.size(), to);
  }
  if (n == 0) throw std::runtime_error("the quick start no longer says '" + from + "': update this test with it");
  return text;
}

// The daemonized valkey-server the block may start, shut down whatever
// happens to the test.
struct ServerOnPort {
  int port;
  ~ServerOnPort() { run_program({"/bin/sh", "-c", "valkey-cli -p " + std::to_string(port) + " shutdown nosave"}); }
};

TEST(Readme, TheQuickStartRunsAsWrittenAndPrintsTheResult) {
  const std::string block = quick_start_block();
  const int port = free_loopback_port();
  ServerOnPort server{port};
  std::string script = substitute(block, "6379", std::to_string(port));
  script = substitute(script, "$PWD/build/bin", EMQ_BIN_DIR);

  const fs::path dir = fs::temp_directory_path() / ("emqd-readme-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Stop at the first failing line (a person would see it and stop), and
  // wait for emqd's drain after the block's `kill $!`.
  RunResult r = run_program({"/bin/bash", "-c", "set -e\ncd " + dir.string() + "\n" + script + "wait\n"});
  const std::string log = read_doc((dir / "emqd.log").string());
  EXPECT_EQ(r.code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err << "\nemqd.log:\n" << log;

  // What the block's comment promises `emq wait` prints, it prints.
  const std::size_t said = block.find("# prints ");
  ASSERT_NE(said, std::string::npos) << "the block no longer says what emq wait prints";
  const std::string promised = block.substr(said + 9, block.find('\n', said) - (said + 9));
  EXPECT_NE(r.out.find(promised), std::string::npos) << "expected " << promised << " in:\n" << r.out;
  EXPECT_NE(r.out.find("emails"), std::string::npos) << "emq stats emails:\n" << r.out;
  EXPECT_NE(log.find("stopped cleanly"), std::string::npos) << log;
  // The server it started has no password: it must listen on loopback only.
  RunResult bind = run_program({"/bin/sh", "-c", "valkey-cli -p " + std::to_string(port) + " CONFIG GET bind"});
  EXPECT_EQ(bind.out, "bind\n127.0.0.1\n") << "the block's valkey-server must listen on loopback only";
  fs::remove_all(dir);
}

// The files the block writes (`> FILE`, `2> FILE`), written in the
// checkout as the README says to run it, are ignored there: a newcomer's
// `git status` stays clean.
TEST(Readme, TheFilesTheQuickStartWritesAreIgnoredByTheCheckout) {
  const std::string block = quick_start_block();
  std::set<std::string> ignored;
  std::istringstream gitignore(read_doc((fs::path(EMQ_SOURCE_DIR) / ".gitignore").string()));
  for (std::string line; std::getline(gitignore, line);) ignored.insert(line);
  const std::regex written(R"(\d?> ([A-Za-z0-9_.-]+))");
  int files = 0;
  for (std::sregex_iterator it(block.begin(), block.end(), written), end; it != end; ++it) {
    const std::string file = (*it)[1];
    ++files;
    EXPECT_TRUE(ignored.count("/" + file) || ignored.count(file))
        << "README's first queue writes " << file << " in the checkout; add /" << file << " to .gitignore";
  }
  EXPECT_EQ(files, 2) << "emqd.yaml and emqd.log; the block now writes:\n" << block;
}

// The packages of README.md's table, "Debian 12 package" column: every
// word in backticks there.
std::set<std::string> table_packages() {
  std::set<std::string> out;
  std::istringstream page(read_doc((fs::path(EMQ_SOURCE_DIR) / "README.md").string()));
  bool in_table = false;
  for (std::string line; std::getline(page, line);) {
    if (line.rfind("| what | version | Debian 12 package |", 0) == 0) in_table = true;
    if (!in_table) continue;
    if (line.rfind("|", 0) != 0) break;
    std::vector<std::string> cells;
    std::istringstream split(line.substr(1));
    for (std::string cell; std::getline(split, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3) continue;
    for (std::size_t open = cells[2].find('`'); open != std::string::npos; open = cells[2].find('`', open + 1)) {
      const std::size_t close = cells[2].find('`', open + 1);
      std::istringstream words(cells[2].substr(open + 1, close - open - 1));
      for (std::string w; words >> w;) out.insert(w);
      open = close;
    }
  }
  return out;
}

// The table is what install-deps.sh installs, for a reader on another
// distribution: each package the script installs is named (shared
// libraries aside: their -dev packages pull them in), and the table names
// nothing the script does not install (nodejs and npm: it installs them
// only when none is on PATH).
TEST(Readme, TheTableNamesWhatInstallDepsInstalls) {
  RunResult r = run_program({"/bin/bash", (fs::path(EMQ_SOURCE_DIR) / "scripts/install-deps.sh").string(), "--list"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> script;
  std::istringstream lines(r.out);
  for (std::string p; lines >> p;) script.insert(p);
  const std::set<std::string> table = table_packages();
  ASSERT_FALSE(table.empty()) << "README.md has no package table";
  const std::regex shared_library("lib.*[0-9]");
  for (const std::string& p : script) {
    if (std::regex_match(p, shared_library)) continue;
    EXPECT_TRUE(table.count(p)) << p << " is installed by scripts/install-deps.sh but not in README.md's table";
  }
  for (const std::string& p : table) {
    if (p == "nodejs" || p == "npm") continue;
    EXPECT_TRUE(script.count(p)) << p << " is in README.md's table but scripts/install-deps.sh does not install it";
  }
}

// The packages install-deps.sh would install for `mode` (--list).
std::set<std::string> packages_for(const std::string& mode) {
  RunResult r =
      run_program({"/bin/bash", (fs::path(EMQ_SOURCE_DIR) / "scripts/install-deps.sh").string(), mode, "--list"});
  EXPECT_EQ(r.code, 0) << mode << ": " << r.err;
  std::set<std::string> out;
  std::istringstream lines(r.out);
  for (std::string p; lines >> p;) out.insert(p);
  return out;
}

// The commands `make -n target` would run in a build directory not yet
// configured.
std::string make_would_run(const std::string& target) {
  const fs::path build = fs::temp_directory_path() / ("emqd-make-n-" + std::to_string(::getpid()));
  RunResult r = run_program({"/usr/bin/env", "make", "-n", "-C", EMQ_SOURCE_DIR, target, "BUILD=" + build.string()});
  EXPECT_EQ(r.code, 0) << "make -n " << target << ": " << r.err;
  return r.out;
}

// Each line of `commands` that runs `cmake --build`.
std::vector<std::string> build_lines(const std::string& commands) {
  std::vector<std::string> out;
  std::istringstream lines(commands);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("cmake --build") != std::string::npos) out.push_back(line);
  }
  return out;
}

// README's "each installs what it needs first, and no more": make demo
// installs the build and run-time packages and compiles the programs
// alone; the test tools, and the packaging tools, are make test's and make
// deb's (issue 53: the demo compiled all 415 targets and installed
// Chromium, Selenium and Prometheus first).
TEST(Readme, MakeDemoInstallsAndCompilesOnlyWhatItRuns) {
  const std::set<std::string> demo = packages_for("--demo");
  const std::set<std::string> tests = packages_for("--test");
  const std::set<std::string> deb = packages_for("--package");
  for (const std::string p :
       {"chromium", "chromium-driver", "python3-selenium", "libgtest-dev", "prometheus", "systemd", "clang-format"}) {
    EXPECT_TRUE(tests.count(p)) << "make test no longer installs " << p << ": update this test";
    EXPECT_FALSE(demo.count(p)) << "make demo would install " << p << ", which only the tests use";
    EXPECT_FALSE(deb.count(p)) << "make deb would install " << p << ", which only the tests use";
  }
  for (const std::string p : {"debootstrap", "podman"}) {
    EXPECT_TRUE(packages_for("--package-test").count(p)) << "make package-test no longer installs " << p;
    EXPECT_FALSE(deb.count(p)) << "make deb would install " << p << ", which only make package-test uses";
  }
  for (const std::string p : {"cmake", "libspdlog-dev", "python3", "valkey-server"}) {
    EXPECT_TRUE(demo.count(p)) << "make demo would not install " << p << ", which the demo needs";
  }

  const std::string would = make_would_run("demo");
  EXPECT_NE(would.find("install-deps.sh --demo"), std::string::npos) << would;
  EXPECT_EQ(would.find("install-deps.sh --test"), std::string::npos) << would;
  EXPECT_NE(would.find("-DEMQ_BUILD_TESTS=OFF"), std::string::npos) << would;
  const std::vector<std::string> builds = build_lines(would);
  ASSERT_FALSE(builds.empty()) << "make demo no longer builds:\n" << would;
  for (const std::string& line : builds) {
    EXPECT_NE(line.find("--target emq_programs"), std::string::npos)
        << "make demo builds more than the programs: " << line;
  }

  const std::string test = make_would_run("test");
  EXPECT_NE(test.find("install-deps.sh --test"), std::string::npos) << test;
  EXPECT_NE(test.find("-DEMQ_BUILD_TESTS=ON"), std::string::npos) << test;
}

}  // namespace
}  // namespace echomq::test
