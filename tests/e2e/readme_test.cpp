// README.md's "A first queue", run as a newcomer pastes it after
// `make demo`: the block is taken from the README's text as written. Two
// substitutions, and only these: a free port for 6379 (the suite must not
// touch a server of the machine's own), and this build's bin/ for
// $PWD/build/bin (the block runs in a temporary directory, not in the
// source tree, where it would write emqd.yaml). Each must be found.
#include <unistd.h>

#include <filesystem>

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
  fs::remove_all(dir);
}

}  // namespace
}  // namespace echomq::test
