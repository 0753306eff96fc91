// ChildProcess: argv without a shell, its own process group, exactly three
// descriptors, the given environment and cwd, clear spawn errors, and a
// destructor that leaves neither a zombie nor a stray process.
#include "process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "process_probe.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using namespace std::chrono_literals;
using test::handler_program;
using ::testing::HasSubstr;

ChildProcess::Params params(std::vector<std::string> argv, std::vector<std::string> env = {"PATH=/usr/bin:/bin"},
                            std::string cwd = "") {
  return ChildProcess::Params{std::move(argv), std::move(env), std::move(cwd)};
}

std::string spawn_error(const ChildProcess::Params& p) {
  try {
    ChildProcess child(p);
  } catch (const SpawnError& e) {
    return e.what();
  }
  return "(spawned)";
}

std::string check_error(const ChildProcess::Params& p) {
  try {
    ChildProcess::check_runnable(p);
  } catch (const SpawnError& e) {
    return e.what();
  }
  return "(runnable)";
}

// The SigBlk or SigIgn mask of a process, as the hex /proc shows.
std::string proc_status_field(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", field.size() + 1));
  }
  return "";
}

TEST(ChildProcess, ReportsExitCodeAndSignal) {
  ChildProcess exits(params({"/bin/sh", "-c", "exit 7"}));
  ExitStatus status = exits.wait();
  EXPECT_EQ(status.kind, ExitStatus::Kind::Exited);
  EXPECT_EQ(status.code, 7);
  EXPECT_EQ(status.describe(), "exit code 7");
  EXPECT_FALSE(status.success());

  ChildProcess killed(params({"/bin/sh", "-c", "kill -TERM $$"}));
  status = killed.wait();
  EXPECT_EQ(status.kind, ExitStatus::Kind::Signaled);
  EXPECT_EQ(status.code, SIGTERM);
  EXPECT_EQ(status.describe(), "killed by signal SIGTERM");
}

TEST(ChildProcess, LeadsItsOwnProcessGroup) {
  ChildProcess child(params({handler_program("hang.sh")}));
  EXPECT_EQ(::getpgid(child.pid()), child.pid());
  EXPECT_NE(::getpgid(child.pid()), ::getpgrp());
  EXPECT_EQ(child.pgid(), child.pid());
}

TEST(ChildProcess, TryWaitAndHasExitedWhileRunningThenTerminateGroup) {
  ChildProcess child(params({handler_program("hang.sh")}));
  EXPECT_FALSE(child.try_wait().has_value());
  EXPECT_FALSE(child.has_exited());
  EXPECT_GE(child.exit_fd(), 0) << "this kernel should have pidfd_open";

  child.terminate_group(SIGTERM);
  ASSERT_TRUE(test::wait_for([&] { return child.has_exited(); }, 5s));
  // has_exited() does not reap: the zombie still holds the group id.
  EXPECT_EQ(::kill(child.pid(), 0), 0);
  const ExitStatus status = child.wait();
  EXPECT_EQ(status.describe(), "killed by signal SIGTERM");
  EXPECT_EQ(child.try_wait()->describe(), "killed by signal SIGTERM");
}

TEST(ChildProcess, PassesExactlyTheGivenEnvironmentAndCwd) {
  test::TempDir dir;
  ChildProcess env(params({"/usr/bin/env"}, {"A=1", "B=two words"}));
  env.stdin_pipe().reset();
  EXPECT_EQ(test::read_from(env.stdout_pipe().get(), 5s), "A=1\nB=two words\n");
  EXPECT_TRUE(env.wait().success());

  ChildProcess pwd(params({"/bin/pwd"}, {}, dir.path()));
  EXPECT_EQ(test::read_from(pwd.stdout_pipe().get(), 5s), dir.path() + "\n");
  EXPECT_TRUE(pwd.wait().success());
}

TEST(ChildProcess, LooksUpABareNameInTheChildsPath) {
  ChildProcess child(params({"printf", "%s", "found"}, {"PATH=/nonexistent:/usr/bin:/bin"}));
  EXPECT_EQ(test::read_from(child.stdout_pipe().get(), 5s), "found");
  EXPECT_TRUE(child.wait().success());

  EXPECT_THAT(spawn_error(params({"printf"}, {"PATH=/nonexistent"})),
              HasSubstr("cannot run 'printf': not found on the handler's PATH (/nonexistent)"));
}

TEST(ChildProcess, SpawnErrorsSayWhatToFix) {
  test::TempDir dir;
  const std::string not_executable = dir.path() + "/not_executable.sh";
  std::ofstream(not_executable) << "#!/bin/sh\nexit 0\n";
  ::chmod(not_executable.c_str(), 0644);

  EXPECT_THAT(spawn_error(params({"/nonexistent/emq-handler"})),
              HasSubstr("cannot run '/nonexistent/emq-handler': no such file"));
  EXPECT_THAT(spawn_error(params({not_executable})), HasSubstr("permission denied; make it executable"));
  EXPECT_THAT(spawn_error(params({"/bin/true"}, {}, dir.path() + "/missing")),
              HasSubstr("working directory '" + dir.path() + "/missing' does not exist"));
  EXPECT_THAT(spawn_error(params({})), HasSubstr("command is empty"));

  // check_runnable finds the same problems without spawning.
  EXPECT_THAT(check_error(params({"/nonexistent/emq-handler"})), HasSubstr("no such file"));
  EXPECT_THAT(check_error(params({not_executable})), HasSubstr("permission denied"));
  EXPECT_THAT(check_error(params({"/bin/true"}, {}, dir.path() + "/missing")), HasSubstr("working directory"));
  EXPECT_THAT(check_error(params({"/tmp"})), HasSubstr("not a regular file"));
  EXPECT_EQ(check_error(params({"true"})), "(runnable)");
  EXPECT_TRUE(test::has_no_children());
}

TEST(ChildProcess, ChildGetsOnlyStdinStdoutStderr) {
  // What a library might leave behind: descriptors without close-on-exec.
  test::TempDir dir;
  const int leaked_file = ::open("/dev/null", O_RDONLY);
  int leaked_pipe[2];
  ASSERT_EQ(::pipe(leaked_pipe), 0);
  ASSERT_GE(leaked_file, 0);

  ChildProcess child(params({handler_program("fd_dump.sh")}));
  child.stdin_pipe().reset();
  const std::string listing = test::read_from(child.stdout_pipe().get(), 5s);
  EXPECT_TRUE(child.wait().success());
  ::close(leaked_file);
  ::close(leaked_pipe[0]);
  ::close(leaked_pipe[1]);

  EXPECT_EQ(test::fds_in_listing(listing), (std::set<int>{0, 1, 2})) << listing;
  EXPECT_THAT(listing, HasSubstr(" 0 -> pipe:"));
  EXPECT_THAT(listing, HasSubstr(" 1 -> pipe:"));
  EXPECT_THAT(listing, HasSubstr(" 2 -> pipe:"));
}

// 3 is the progress pipe and 4 the descriptor given, whatever its number:
// here the caller's 0, which the child's own stdin would overwrite if it
// were moved in order.
TEST(ChildProcess, TheProgressPipeIsThreeAndAGivenDescriptorFourWhateverItsNumber) {
  test::TempDir dir;
  const std::string four = dir.path() + "/four";
  std::ofstream(four) << "four";
  const int saved_stdin = ::dup(0);
  ASSERT_GE(saved_stdin, 0);
  ASSERT_EQ(::dup2(::open(four.c_str(), O_RDONLY | O_CLOEXEC), 0), 0);

  ChildProcess::Params p = params({"/bin/sh", "-c", "printf three >&3; cat <&4"});
  p.progress = true;
  p.fd4 = 0;
  std::string out, progress;
  {
    ChildProcess child(p);
    ::dup2(saved_stdin, 0);
    child.stdin_pipe().reset();
    out = test::read_from(child.stdout_pipe().get(), 5s);
    progress = test::read_from(child.progress_pipe().get(), 5s);
    EXPECT_TRUE(child.wait().success()) << out;
  }
  ::close(saved_stdin);
  EXPECT_EQ(progress, "three");
  EXPECT_EQ(out, "four");
}

TEST(ChildProcess, ChildStartsWithNoBlockedOrIgnoredSignals) {
  // As the daemon will be: SIGTERM blocked for its signal thread, SIGPIPE ignored.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigset_t old_mask;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
  struct sigaction ignore {
  }, old_pipe{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old_pipe), 0);

  ChildProcess child(params({"/bin/sleep", "600"}));
  const std::string blocked = proc_status_field(child.pid(), "SigBlk");
  const std::string ignored = proc_status_field(child.pid(), "SigIgn");

  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  EXPECT_EQ(blocked, "0000000000000000");
  // Every standard signal and every SIGRTMIN+n is at its default. glibc's
  // two internal signals (32 and 33, below SIGRTMIN) are not ours to set:
  // its sigaction refuses them, so they keep what the daemon inherited,
  // which may be "ignored" (posix_spawn set them so on purpose).
  const unsigned long long libc_internal = (1ULL << 31) | (1ULL << 32);
  EXPECT_EQ(std::stoull(ignored, nullptr, 16) & ~libc_internal, 0u) << "SigIgn " << ignored;

  child.terminate_group(SIGTERM);
  EXPECT_EQ(child.wait().describe(), "killed by signal SIGTERM");
}

TEST(ChildProcess, DestructorKillsTheWholeGroupAndReaps) {
  pid_t pgid = 0;
  {
    ChildProcess child(params({handler_program("ignore_term.sh")}));
    const std::string said = test::read_from(child.stderr_pipe().get(), 5s, "\n");
    ASSERT_THAT(said, HasSubstr("ignoring TERM"));
    pgid = child.pgid();
    ASSERT_GE(test::live_processes_in_group(pgid).size(), 2u) << "the script and its sleepers";
  }
  EXPECT_TRUE(test::wait_for([&] { return test::live_processes_in_group(pgid).empty(); }, 5s));
  EXPECT_TRUE(test::has_no_children()) << "the leader was reaped, not left a zombie";
  // The orphaned sleeper's zombie is reaped by whoever inherited it (init).
  EXPECT_TRUE(test::wait_for([&] { return test::group_gone(pgid); }, 15s));
}

TEST(ChildProcess, MoveTransfersOwnership) {
  ChildProcess first(params({handler_program("hang.sh")}));
  const pid_t pid = first.pid();
  ChildProcess second(std::move(first));
  EXPECT_EQ(first.pid(), -1);
  EXPECT_EQ(second.pid(), pid);
  EXPECT_FALSE(second.has_exited());
  ChildProcess third(params({"/bin/true"}));
  third = std::move(second);  // /bin/true is killed (if still running) and reaped
  EXPECT_EQ(third.pid(), pid);
  third.terminate_group(SIGKILL);
  EXPECT_EQ(third.wait().describe(), "killed by signal SIGKILL");
  EXPECT_TRUE(test::has_no_children());
}

}  // namespace
}  // namespace echomq::daemon
