// Handler programs are found at load time the way execvp will find them at
// run time, and stored as absolute paths; relative paths start from the
// handler's cwd, or else from the config file's directory. Real files in a
// temp directory, real permission bits.
#include <gtest/gtest.h>
#include <unistd.h>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

const char* kScript = "#!/bin/sh\nexit 0\n";

std::string one_queue(const std::string& handler) { return "queues:\n  - name: q\n    handler:\n" + handler; }

TEST(Program, RelativePathIsTakenFromTheConfigDirectory) {
  TempDir dir;
  const std::string script = dir.write("handlers/run.sh", kScript, 0755);
  const std::string path =
      dir.write("etc/emqd.yaml", one_queue("      type: exec\n      command: [../handlers/run.sh, x]\n"));
  const Config c = load_config(path);
  EXPECT_EQ(c.queues[0].handler.command, (std::vector<std::string>{script, "x"}));
}

TEST(Program, RelativePathIsTakenFromTheHandlersCwdWhenSet) {
  TempDir dir;
  const std::string script = dir.write("srv/app/bin/run.sh", kScript, 0755);
  const std::string path =
      dir.write("emqd.yaml", one_queue("      type: pool\n      cwd: srv/app\n      command: [./bin/run.sh]\n"));
  const Config c = load_config(path);
  EXPECT_EQ(c.queues[0].handler.cwd, dir.path() + "/srv/app");
  EXPECT_EQ(c.queues[0].handler.command, (std::vector<std::string>{script}));
}

TEST(Program, BareNameIsSearchedOnPathNotNextToTheConfig) {
  TempDir dir;
  dir.write("emqd-test-prog", kScript, 0755);  // beside the config: execvp would not look here
  const std::string path = dir.write("emqd.yaml", one_queue("      type: exec\n      command: [emqd-test-prog]\n"));
  ScopedEnv env("PATH", (dir.path() + "/empty-bin").c_str());
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_EQ(errors[0], path + ":5: queues[0].handler.command[0]: expected a program on PATH (" + dir.path() +
                           "/empty-bin), but emqd-test-prog is not there; give its absolute path or install it");
}

TEST(Program, PathOrderWinsAndANonExecutableMatchIsPassedOver) {
  TempDir dir;
  dir.write("a/emqd-test-prog", kScript, 0644);  // not executable: execvp goes on
  const std::string b = dir.write("b/emqd-test-prog", kScript, 0755);
  dir.write("c/emqd-test-prog", kScript, 0755);
  const std::string path = dir.write("emqd.yaml", one_queue("      type: exec\n      command: [emqd-test-prog]\n"));
  ScopedEnv env("PATH", (dir.path() + "/a:relative/dir::" + dir.path() + "/b:" + dir.path() + "/c").c_str());
  EXPECT_EQ(load_config(path).queues[0].handler.command[0], b);
}

TEST(Program, OnlyNonExecutableMatchesOnPathAreNamedInTheError) {
  TempDir dir;
  const std::string a = dir.write("a/emqd-test-prog", kScript, 0644);
  const std::string path = dir.write("emqd.yaml", one_queue("      type: exec\n      command: [emqd-test-prog]\n"));
  ScopedEnv env("PATH", (dir.path() + "/a").c_str());
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_NE(errors[0].find("(" + a + " is not executable (chmod +x it))"), std::string::npos) << errors[0];
}

TEST(Program, ExecutableBitIsWhatCounts) {
  TempDir dir;
  const std::string script = dir.write("run.sh", kScript, 0644);
  const std::string path = dir.write("emqd.yaml", one_queue("      type: exec\n      command: [./run.sh]\n"));
  std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_EQ(errors[0], path + ":5: queues[0].handler.command[0]: expected an executable file, but " + script +
                           " is not executable (chmod +x it)");
  ::chmod(script.c_str(), 0755);
  EXPECT_EQ(load_config(path).queues[0].handler.command[0], script);
}

TEST(Program, AnInvalidCwdIsReportedAloneNotAsAMissingProgramToo) {
  TempDir dir;
  const std::string path =
      dir.write("emqd.yaml", one_queue("      type: exec\n      cwd: nowhere\n      command: [./run.sh]\n"));
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_EQ(errors[0], path + ":5: queues[0].handler.cwd: expected an existing directory, but " + dir.path() +
                           "/nowhere does not exist");
}

TEST(Program, UnreadablePasswordFileIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file; the missing-file row covers this as root";
  TempDir dir;
  const std::string secret = dir.write("secret", "pw\n", 0000);
  const std::string path = dir.write(
      "emqd.yaml", "valkey: { password_file: secret }\n" + one_queue("      type: exec\n      command: [/bin/cat]\n"));
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_EQ(errors[0], path +
                           ":1: valkey.password_file: expected a readable file holding the password, but cannot read " +
                           secret + ": Permission denied");
}

}  // namespace
}  // namespace echomq::daemon::test
