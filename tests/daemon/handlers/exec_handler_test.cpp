// The exec kind end to end, with the real programs in tests/handlers/: every
// way a job can end, the payload and result byte for byte at any size, the
// output cap, stderr, the environment, timeouts and stops that reach the
// whole process group, and no zombie or descriptor left behind.
#include "handlers/exec_handler.h"
#include "handler_test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process_probe.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using test_support::seconds_since;
using namespace std::chrono_literals;
using test::handler_program;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Verdict = Outcome::Verdict;
using Clock = std::chrono::steady_clock;

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

std::set<std::string> lines_of(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.insert(line);
  return out;
}

class ExecHandlerTest : public ::testing::Test {
 protected:
  // A safety net, not under test: a broken handler fails the test with
  // "timed out" instead of hanging it.
  static HandlerConfig config(std::vector<std::string> command) {
    HandlerConfig c;
    c.command = std::move(command);
    c.timeout_s = 20;
    return c;
  }
  static HandlerConfig program(const std::string& name) { return config({handler_program(name)}); }

  Job job(std::string payload = "") {
    Job j;
    j.queue = "emails";
    j.id = "JOB_" + std::to_string(++next_id_);
    j.attempt = 1;
    j.deadline_ms = 1700000000000;
    j.payload = std::move(payload);
    return j;
  }

  Outcome run(const HandlerConfig& c, const Job& j, std::vector<std::string> secrets = {}) {
    ExecHandler handler({"emails", c, std::move(secrets)});
    handler.start();
    StopToken stop;
    return handler.run(j, stop);
  }
  Outcome run(const HandlerConfig& c, std::string payload = "") { return run(c, job(std::move(payload))); }

  test::LogCapture logs_;
  int next_id_ = 0;
};

TEST_F(ExecHandlerTest, ExitZeroCompletesWithStdoutAsResult) {
  const Outcome out = run(program("ok.sh"), "hello");
  EXPECT_EQ(out.verdict, Verdict::Complete);
  EXPECT_EQ(out.result, "ok:hello");
  EXPECT_EQ(out.error, "");
}

TEST_F(ExecHandlerTest, ResultIsByteExactIncludingBinary) {
  std::string every_byte;
  for (int i = 0; i < 4 * 256; ++i) every_byte.push_back(static_cast<char>(i & 0xff));
  Outcome out = run(config({"/bin/cat"}), every_byte);
  EXPECT_EQ(out.verdict, Verdict::Complete);
  EXPECT_EQ(out.result, every_byte);

  out = run(program("ok.sh"), every_byte);
  EXPECT_EQ(out.result, "ok:" + every_byte);
}

TEST_F(ExecHandlerTest, EmptyPayloadIsAnImmediateEof) {
  const Outcome out = run(config({"/bin/cat"}), "");
  EXPECT_EQ(out.verdict, Verdict::Complete);
  EXPECT_EQ(out.result, "");
}

TEST_F(ExecHandlerTest, PermanentExitCodeSendsTheJobToDead) {
  const Outcome out = run(program("exit65.sh"));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "exit code 65: bad payload");
}

TEST_F(ExecHandlerTest, OtherExitCodeRetriesWithTheStderrTail) {
  const Outcome out = run(program("exit3.sh"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "exit code 3: transient trouble");
}

TEST_F(ExecHandlerTest, PermanentExitCodesAreTheConfiguredOnes) {
  HandlerConfig exit3 = program("exit3.sh");
  exit3.permanent_exit_codes = {3, 75};
  EXPECT_EQ(run(exit3).verdict, Verdict::Dead);
  HandlerConfig exit65 = program("exit65.sh");
  exit65.permanent_exit_codes = {3};
  EXPECT_EQ(run(exit65).verdict, Verdict::Retry);
}

TEST_F(ExecHandlerTest, DeathBySignalRetries) {
  const Outcome out = run(program("crash_signal.sh"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "killed by signal SIGSEGV");
}

TEST_F(ExecHandlerTest, TenMiBPayloadRoundTripsThroughCat) {
  const std::string payload = random_bytes(10 << 20, 1);
  HandlerConfig c = config({"/bin/cat"});
  c.max_output_bytes = 10 << 20;
  const auto start = Clock::now();
  const Outcome out = run(c, payload);
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result.size(), payload.size());
  EXPECT_TRUE(out.result == payload) << "the result differs from the payload";
  EXPECT_LT(seconds_since(start), 10);
}

TEST_F(ExecHandlerTest, TenMiBPayloadToAHandlerThatNeverReadsStdin) {
  // Nothing here ignores SIGPIPE: the handler must cope with EPIPE itself.
  struct sigaction current {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &current), 0);
  ASSERT_EQ(current.sa_handler, SIG_DFL);

  const auto start = Clock::now();
  const Outcome out = run(program("never_reads_stdin.sh"), random_bytes(10 << 20, 2));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, "ignored stdin\n");
  EXPECT_LT(seconds_since(start), 5);
}

TEST_F(ExecHandlerTest, OutputUpToTheLimitCompletesOneByteMoreRetries) {
  HandlerConfig c = config({"/bin/cat"});
  c.max_output_bytes = 100000;
  Outcome out = run(c, std::string(100000, 'a'));
  EXPECT_EQ(out.verdict, Verdict::Complete);
  EXPECT_EQ(out.result.size(), 100000u);

  out = run(c, std::string(100001, 'a'));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "output exceeded max_output_bytes (100000)");
  EXPECT_EQ(out.result, "");
}

TEST_F(ExecHandlerTest, EndlessOutputIsCutAndTheGroupKilled) {
  HandlerConfig c = program("flood_stdout.sh");
  c.max_output_bytes = 1 << 20;
  const auto start = Clock::now();
  const Outcome out = run(c);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "output exceeded max_output_bytes (1048576)");
  EXPECT_LT(seconds_since(start), 5);
}

TEST_F(ExecHandlerTest, EachStderrLineIsLoggedAndTheTailIsTheError) {
  const Job j = job("first line\nsecond line\nno newline at the end");
  const Outcome out = run(program("stderr_lines.sh"), j);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "exit code 1: first line\nsecond line\nno newline at the end");
  const std::string prefix = "info queue=emails job=" + j.id + " stderr: ";
  EXPECT_TRUE(logs_.contains(prefix + "first line"));
  EXPECT_TRUE(logs_.contains(prefix + "second line"));
  EXPECT_TRUE(logs_.contains(prefix + "no newline at the end"));
}

TEST_F(ExecHandlerTest, ErrorTextIsTheLastFourKiBOfStderr) {
  std::string payload;
  for (int i = 0; i < 3000; ++i) payload += "stderr line " + std::to_string(i) + "\n";
  const Outcome out = run(program("stderr_lines.sh"), payload);
  std::string tail = payload.substr(payload.size() - 4096);
  tail.pop_back();
  EXPECT_EQ(out.error, "exit code 1: " + tail);
}

class EnvTest : public ExecHandlerTest {
 protected:
  void SetUp() override {
    ::setenv("EMQ_TEST_SECRET", "must-not-leak", 1);
    ::setenv("EMQ_VALKEY_PASSWORD", "hunter2", 1);
  }
  void TearDown() override {
    ::unsetenv("EMQ_TEST_SECRET");
    ::unsetenv("EMQ_VALKEY_PASSWORD");
  }
  static std::string daemon_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : fallback;
  }
};

TEST_F(EnvTest, HandlerSeesExactlyTheScrubbedEnvironment) {
  test::TempDir dir;
  HandlerConfig c = program("env_dump.sh");
  c.env = {{"RELAY_PORT", "25"}};
  c.cwd = dir.path();
  Job j = job();
  j.attempt = 3;
  const Outcome out = run(c, j, {"EMQ_VALKEY_PASSWORD"});
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(lines_of(out.result), (std::set<std::string>{
                                      "EMQ_ATTEMPT=3", "EMQ_DEADLINE_MS=1700000000000", "EMQ_JOB_ID=" + j.id,
                                      "EMQ_PROGRESS_FD=3", "EMQ_QUEUE=emails", "LANG=" + daemon_or("LANG", "C.UTF-8"),
                                      "PATH=" + daemon_or("PATH", "/usr/local/bin:/usr/bin:/bin"), "RELAY_PORT=25",
                                      "PWD=" + dir.path(),  // dash's own, from its cwd
                                  }));
}

TEST_F(EnvTest, InheritEnvPassesTheDaemonsButNeverThePassword) {
  HandlerConfig c = program("env_dump.sh");
  c.inherit_env = true;
  const Outcome out = run(c, job(), {"EMQ_VALKEY_PASSWORD"});
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  const auto vars = lines_of(out.result);
  EXPECT_EQ(vars.count("EMQ_TEST_SECRET=must-not-leak"), 1u);
  EXPECT_THAT(out.result, Not(HasSubstr("EMQ_VALKEY_PASSWORD")));
  EXPECT_THAT(out.result, Not(HasSubstr("hunter2")));
}

TEST_F(ExecHandlerTest, TimeoutKillsAGroupThatIgnoresSigterm) {
  HandlerConfig c = program("ignore_term.sh");
  c.timeout_s = 1;
  c.kill_grace_s = 1;
  const auto start = Clock::now();
  const Outcome out = run(c);
  const double took = seconds_since(start);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, StartsWith("timed out after 1s: ignoring TERM pgid="));
  EXPECT_GE(took, 1.9) << "SIGKILL only after the grace";
  EXPECT_LT(took, 1 + 1 + 1.5);

  const pid_t pgid = test::pgid_in(out.error);
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(test::wait_for([&] { return test::live_processes_in_group(pgid).empty(); }, 2s));
  // The orphaned sleeper's zombie is reaped by init, on its own schedule.
  EXPECT_TRUE(test::wait_for([&] { return test::group_gone(pgid); }, 15s));
}

TEST_F(ExecHandlerTest, TimeoutOfAHandlerThatHonoursSigterm) {
  HandlerConfig c = program("hang.sh");
  c.timeout_s = 0.5;
  c.kill_grace_s = 10;
  const auto start = Clock::now();
  const Outcome out = run(c);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, StartsWith("timed out after 0.5s: hanging pgid="));
  EXPECT_LT(seconds_since(start), 3) << "SIGTERM was enough; no need to wait out the grace";
}

TEST_F(ExecHandlerTest, StopTokenEndsARunningJobPromptly) {
  ExecHandler handler({"emails", program("hang.sh"), {}});
  handler.start();
  StopToken stop;
  const Job j = job();
  std::atomic<bool> started{false};
  Clock::time_point requested;
  std::thread stopper([&] {
    started = test::wait_for([&] { return logs_.contains("job=" + j.id + " stderr: hanging"); }, 10s);
    requested = Clock::now();
    stop.request();
  });
  const Outcome out = handler.run(j, stop);
  stopper.join();
  ASSERT_TRUE(started);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, StartsWith("stopped by the daemon"));
  EXPECT_LT(seconds_since(requested), 2);
}

TEST_F(ExecHandlerTest, StopEscalatesToSigkillAfterTheGrace) {
  HandlerConfig c = program("ignore_term.sh");
  c.kill_grace_s = 0.5;
  ExecHandler handler({"emails", c, {}});
  StopToken stop;
  const Job j = job();
  Clock::time_point requested;
  std::thread stopper([&] {
    test::wait_for([&] { return logs_.contains("job=" + j.id + " stderr: ignoring TERM"); }, 10s);
    requested = Clock::now();
    stop.request();
  });
  const Outcome out = handler.run(j, stop);
  stopper.join();
  const double took = seconds_since(requested);
  EXPECT_THAT(out.error, StartsWith("stopped by the daemon"));
  EXPECT_GE(took, 0.45);
  EXPECT_LT(took, 2.5);
  const pid_t pgid = test::pgid_in(out.error);
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(test::wait_for([&] { return test::live_processes_in_group(pgid).empty(); }, 2s));
}

TEST_F(ExecHandlerTest, StopRequestedBeforehandStartsNothing) {
  ExecHandler handler({"emails", program("hang.sh"), {}});
  StopToken stop;
  stop.request();
  const auto start = Clock::now();
  const Outcome out = handler.run(job(), stop);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "stopped by the daemon");
  EXPECT_LT(seconds_since(start), 0.5);
  EXPECT_TRUE(test::has_no_children());
}

TEST_F(ExecHandlerTest, ALeftoverProcessHoldingTheOutputDoesNotHangTheJob) {
  const auto start = Clock::now();
  const Outcome out = run(program("fork_outlives.sh"));
  EXPECT_LT(seconds_since(start), 2);
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_THAT(out.result, StartsWith("leader done pgid="));
  EXPECT_TRUE(logs_.contains("still held its stdout or stderr open"));
  const pid_t pgid = test::pgid_in(out.result);
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(test::wait_for([&] { return test::live_processes_in_group(pgid).empty(); }, 2s))
      << "the sleeper it left behind was killed with the group";
}

TEST_F(ExecHandlerTest, HandlerGetsOnlyDescriptorsZeroOneTwoAndTheProgressPipe) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, as a library might
  ASSERT_GE(leaked, 0);
  const Outcome out = run(program("fd_dump.sh"));
  ::close(leaked);
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(test::fds_in_listing(out.result), (std::set<int>{0, 1, 2, 3})) << out.result;
}

// Each line on EMQ_PROGRESS_FD is one report, in order; a line past 1024
// bytes is cut there.
TEST_F(ExecHandlerTest, LinesOnTheProgressDescriptorAreReports) {
  HandlerConfig c = program("progress_lines.sh");
  ExecHandler h({"emails", c, {}});
  Job j = job();
  std::vector<std::string> reports;
  std::mutex m;
  j.progress = [&](std::string_view v) {
    std::lock_guard<std::mutex> lock(m);
    reports.emplace_back(v);
  };
  StopToken stop;
  const Outcome out = h.run(j, stop);
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0], "10%");
  EXPECT_EQ(reports[1], "{\"step\":2}");
  EXPECT_EQ(reports[2], std::string(1024, 'x'));
  EXPECT_EQ(reports[3], "last, without a newline");
}

// Issue 37, row 14: a parent's children's results are descriptor 4, named
// /dev/fd/4, and never a file with a name in $TMPDIR (one left behind by a
// killed daemon stayed for ever); the daemon keeps no descriptor of it.
TEST_F(ExecHandlerTest, AParentGetsItsChildrenOnDescriptorFourAndNothingInTmpdir) {
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / ("emq-exec-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const char* was = std::getenv("TMPDIR");
  const std::string saved = was != nullptr ? was : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const std::set<int> fds_before = test::open_fds();
  Job parent = job("sheet");
  parent.children = {{"thumbs", "JOB_c1", ChildOutcome::Completed, "a.png"}};
  const Outcome read = run(config({"/bin/sh", "-c",
                                   "printf '%s|' \"$EMQ_CHILDREN_FILE\"; cat \"$EMQ_CHILDREN_FILE\"; "
                                   "printf '|'; ls -A \"$TMPDIR\"; printf '|'; cat <&4"}),
                           parent);
  const Outcome fds = run(program("fd_dump.sh"), parent);
  if (was != nullptr)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  ASSERT_EQ(read.verdict, Verdict::Complete) << read.error;
  const std::string json = R"([{"queue":"thumbs","id":"JOB_c1","outcome":"completed","result":"a.png"}])";
  EXPECT_EQ(read.result, "/dev/fd/4|" + json + "||" + json) << "the path, then nothing in $TMPDIR, then fd 4 itself";
  ASSERT_EQ(fds.verdict, Verdict::Complete) << fds.error;
  EXPECT_EQ(test::fds_in_listing(fds.result), (std::set<int>{0, 1, 2, 3, 4})) << fds.result;
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  EXPECT_EQ(test::open_fds(), fds_before) << "the daemon closed its descriptor";
  std::filesystem::remove_all(tmp);
}

TEST_F(ExecHandlerTest, NoZombiesAndNoLeakedDescriptorsAfterManyJobs) {
  const std::set<int> fds_before = test::open_fds();
  const std::vector<std::string> programs = {"ok.sh", "exit3.sh", "crash_signal.sh", "exit65.sh",
                                             "never_reads_stdin.sh"};
  for (int i = 0; i < 100; ++i) {
    ExecHandler h({"emails", program(programs[i % programs.size()]), {}});
    StopToken stop;
    h.run(job(std::string(100000, 'p')), stop);
  }
  HandlerConfig flood = program("flood_stdout.sh");
  flood.max_output_bytes = 1000;
  HandlerConfig timeout = program("hang.sh");
  timeout.timeout_s = 0.2;
  for (const HandlerConfig& c : {flood, timeout, program("fork_outlives.sh")}) {
    ExecHandler h({"emails", c, {}});
    StopToken stop;
    h.run(job(), stop);
  }
  EXPECT_TRUE(test::has_no_children());
  EXPECT_EQ(test::open_fds(), fds_before);
}

TEST_F(ExecHandlerTest, EightJobsRunConcurrentlyFromEightThreads) {
  test::TempDir dir;
  HandlerConfig c = program("rendezvous.sh");
  c.env = {{"RENDEZVOUS_DIR", dir.path()}, {"RENDEZVOUS_N", "8"}};
  c.timeout_s = 30;
  ExecHandler handler({"emails", c, {}});
  handler.start();
  std::vector<Job> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(job());
  std::vector<Outcome> outcomes(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      StopToken stop;
      outcomes[i] = handler.run(jobs[i], stop);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(outcomes[i].verdict, Verdict::Complete) << outcomes[i].error;
    EXPECT_EQ(outcomes[i].result, "met " + jobs[i].id + "\n");
  }
  EXPECT_TRUE(test::has_no_children());
}

TEST_F(ExecHandlerTest, StartRefusesACommandThatCannotRun) {
  const auto start_error = [](const HandlerConfig& c) -> std::string {
    try {
      ExecHandler({"emails", c, {}}).start();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(started)";
  };
  EXPECT_EQ(start_error(config({"/nonexistent/emq-handler"})),
            "queue emails: exec handler: cannot run '/nonexistent/emq-handler': no such file (or its "
            "#! interpreter is missing); check the handler's command");
  EXPECT_THAT(start_error(config({})), HasSubstr("command is empty"));
  HandlerConfig missing_cwd = program("ok.sh");
  missing_cwd.cwd = "/nonexistent/dir";
  EXPECT_THAT(start_error(missing_cwd), HasSubstr("working directory '/nonexistent/dir' does not exist"));
  HandlerConfig bare = config({"cat"});
  bare.env = {{"PATH", "/nonexistent"}};
  EXPECT_THAT(start_error(bare), HasSubstr("cannot run 'cat': not found on the handler's PATH"));
  bare.env = {{"PATH", "/usr/bin:/bin"}};
  EXPECT_EQ(start_error(bare), "(started)");
}

TEST_F(ExecHandlerTest, AProgramThatVanishedRetriesWithTheReason) {
  test::TempDir dir;
  const std::string copy = dir.path() + "/ok.sh";
  std::filesystem::copy_file(handler_program("ok.sh"), copy);
  ExecHandler handler({"emails", config({copy}), {}});
  handler.start();
  std::filesystem::remove(copy);
  StopToken stop;
  const Outcome out = handler.run(job("x"), stop);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, HasSubstr("cannot run '" + copy + "': no such file"));
  EXPECT_TRUE(logs_.contains("warning queue=emails job="));
}

TEST_F(ExecHandlerTest, FactoryBuildsAnExecHandlerFromTheQueueConfig) {
  QueueConfig queue;
  queue.name = "emails";
  queue.handler = program("ok.sh");
  std::unique_ptr<Handler> handler = make_exec_handler(queue, {"EMQ_VALKEY_PASSWORD"});
  handler->start();
  StopToken stop;
  const Outcome out = handler->run(job("via factory"), stop);
  EXPECT_EQ(out.result, "ok:via factory");
  handler->shutdown();
}

// A measurement, not a check: prints jobs/s for 2000 /bin/true and 2000
// ok.sh jobs from 8 threads. Disabled, as it takes a while on a busy
// machine; run it with
//   emqd_handler_tests --gtest_also_run_disabled_tests --gtest_filter='ExecThroughput.*'
TEST(ExecThroughput, DISABLED_TwoThousandJobsFromEightThreads) {
  for (const std::string& command : {std::string("/bin/true"), handler_program("ok.sh")}) {
    HandlerConfig c;
    c.command = {command};
    ExecHandler handler({"bench", c, {}});
    handler.start();
    constexpr int kJobs = 2000;
    constexpr int kThreads = 8;
    std::atomic<int> next{0};
    std::atomic<int> completed{0};
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        StopToken stop;
        while (next.fetch_add(1) < kJobs) {
          Job j;
          j.queue = "bench";
          j.id = "JOB_bench";
          j.payload = "payload";
          if (handler.run(j, stop).verdict == Verdict::Complete) ++completed;
        }
      });
    }
    for (auto& t : threads) t.join();
    const double took = seconds_since(start);
    EXPECT_EQ(completed.load(), kJobs);
    std::printf("[ measure  ] %s: %d jobs from %d threads in %.2f s = %.0f jobs/s\n", command.c_str(), kJobs, kThreads,
                took, kJobs / took);
  }
  EXPECT_TRUE(test::has_no_children());
}

}  // namespace
}  // namespace echomq::daemon
