// The pool kind end to end, with real long-lived processes: the example
// handlers (Python, Node, sh) and one fixture per way a pool process can
// misbehave (tests/handlers/pool_*). Each failure fails the job for retry
// and replaces the process; replacements are counted and, when they keep
// failing, spaced out by the backoff; drains close stdin and wait.
#include "handlers/pool_handler.h"
#include "handler_test_support.h"

#include <signal.h>
#include <stdlib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "handlers/pool_protocol.h"
#include "process_probe.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using test_support::every_byte;
using test_support::seconds_since;
using namespace std::chrono_literals;
using test::handler_program;
using test::wait_for;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Verdict = Outcome::Verdict;
using Clock = std::chrono::steady_clock;

constexpr const char* kPython = "/usr/bin/python3";

std::string example(const std::string& name) { return std::string(EMQ_SOURCE_DIR) + "/examples/handlers/pool/" + name; }

std::string ascii_upper(std::string bytes) {
  for (char& c : bytes) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return bytes;
}

class PoolHandlerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Every handler of the test is gone by now: so must its processes be.
    EXPECT_TRUE(test::has_no_children());
  }

  // timeout_s is a safety net here, not under test: a broken pool fails
  // the test instead of hanging it.
  static HandlerConfig config(std::vector<std::string> command) {
    HandlerConfig c;
    c.command = std::move(command);
    c.timeout_s = 20;
    c.kill_grace_s = 2;
    return c;
  }
  static HandlerConfig python(const std::string& path, std::vector<std::string> args = {}) {
    std::vector<std::string> argv = {kPython, path};
    argv.insert(argv.end(), args.begin(), args.end());
    return config(argv);
  }

  PoolHandler::Params params(HandlerConfig c, int concurrency = 1) {
    PoolHandler::Params p;
    p.queue = "thumbs";
    p.handler = std::move(c);
    p.concurrency = concurrency;
    p.restart_backoff = {100, 2.0, 10000, 0};
    p.on_restart = [this] {
      std::lock_guard<std::mutex> lock(restart_mu_);
      restart_times_.push_back(Clock::now());
    };
    return p;
  }

  std::unique_ptr<PoolHandler> start(PoolHandler::Params p) {
    auto handler = std::make_unique<PoolHandler>(std::move(p));
    handler->start();
    return handler;
  }

  Job job(std::string payload = "") {
    Job j;
    j.queue = "thumbs";
    j.id = "JOB_" + std::to_string(++next_id_);
    j.attempt = 1;
    j.deadline_ms = 1700000000000;
    j.payload = std::move(payload);
    return j;
  }

  static Outcome run(PoolHandler& h, const Job& j) {
    StopToken stop;
    return h.run(j, stop);
  }

  // The only process of a one-process pool, once it runs.
  static pid_t only_pid(PoolHandler& h) {
    std::vector<pid_t> pids;
    wait_for([&] { return (pids = h.pids()).size() == 1; }, 10s);
    return pids.empty() ? 0 : pids[0];
  }

  std::vector<Clock::time_point> restart_times() {
    std::lock_guard<std::mutex> lock(restart_mu_);
    return restart_times_;
  }

  test::LogCapture logs_;
  int next_id_ = 0;
  std::mutex restart_mu_;
  std::vector<Clock::time_point> restart_times_;
};

TEST_F(PoolHandlerTest, PythonExampleUpperCasesTextAndBinaryAndFailsEmptyForGood) {
  auto pool = start(params(python(example("echo_upper.py"))));
  Outcome out = run(*pool, job("hello, pool é"));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, "HELLO, POOL É");

  out = run(*pool, job(every_byte(2)));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, ascii_upper(every_byte(2)));

  out = run(*pool, job(""));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "empty payload: nothing to upper-case");
  EXPECT_EQ(pool->restarts(), 0u);
}

TEST_F(PoolHandlerTest, NodeExampleUpperCasesTextAndBinaryAndFailsEmptyForGood) {
  auto pool = start(params(config({"/usr/bin/node", example("echo_upper.js")})));
  Outcome out = run(*pool, job("hello, node é"));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, "HELLO, NODE É");

  out = run(*pool, job(every_byte(2)));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, ascii_upper(every_byte(2)));

  out = run(*pool, job(""));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "empty payload: nothing to upper-case");
}

TEST_F(PoolHandlerTest, ShellExampleEchoesEveryByteValueAndNul) {
  auto pool = start(params(config({"/bin/sh", example("echo.sh")})));
  // Not UTF-8: payload_b64 in, result_b64 out.
  Outcome out = run(*pool, job(every_byte(4)));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_TRUE(out.result == every_byte(4)) << "the result differs from the payload";

  // UTF-8 with NUL and control bytes: JSON escapes in, the same out.
  const std::string text = std::string("nul\0in the \"middle\"\n\ttab \\ é", 29);
  out = run(*pool, job(text));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, text);

  out = run(*pool, job(""));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "empty payload");
}

TEST_F(PoolHandlerTest, AFourMiBPayloadAndResultPassWithoutBlockingEitherSide) {
  HandlerConfig c = python(example("echo_upper.py"));
  c.max_output_bytes = 8 << 20;
  auto pool = start(params(c));
  std::string payload(4 << 20, 'a');
  for (std::size_t i = 0; i < payload.size(); i += 7) payload[i] = static_cast<char>('a' + i % 26);
  // A deadlock between the frame writer and the reply reader would end
  // in "timed out" (timeout_s is 20 s).
  const Outcome out = run(*pool, job(payload));
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_TRUE(out.result == ascii_upper(payload)) << "the result differs";
}

TEST_F(PoolHandlerTest, TheHandlerReadsExactlyTheDocumentedFrame) {
  auto pool = start(params(config({handler_program("pool_frame.sh")})));
  for (const std::string& payload : {std::string("plain"), every_byte()}) {
    Job j = job(payload);
    j.attempt = 3;
    const Outcome out = run(*pool, j);
    ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
    std::string frame = encode_job_frame(j);
    frame.pop_back();  // read stripped the newline
    EXPECT_EQ(out.result, frame);
    EXPECT_THAT(out.result, StartsWith("{\"id\":\"" + j.id +
                                       "\",\"queue\":\"thumbs\",\"attempt\":3,"
                                       "\"deadline_ms\":1700000000000,\"payload"));
  }
}

TEST_F(PoolHandlerTest, ProgressLinesBeforeTheAnswerAreReportedEvenWhenReadTogether) {
  auto pool = start(params(config({handler_program("pool_progress_burst.sh")})));
  for (int n = 0; n < 3; ++n) {
    std::vector<std::string> reports;
    Job j = job("p");
    j.progress = [&](std::string_view v) { reports.emplace_back(v); };
    const Outcome out = run(*pool, j);
    ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
    EXPECT_EQ(out.result, "r");
    EXPECT_EQ(reports, (std::vector<std::string>{"1/2", "{\"step\":2}"}));
  }
}

TEST_F(PoolHandlerTest, ProcessesSeeTheScrubbedEnvironmentWithTheirQueue) {
  ::setenv("EMQ_TEST_POOL_SECRET", "hunter2", 1);
  ::setenv("EMQ_TEST_POOL_VISIBLE", "yes", 1);
  HandlerConfig c = config({handler_program("pool_env.sh")});
  c.env = {{"THUMB_SIZE", "64"}};
  PoolHandler::Params p = params(c);
  p.secret_env_names = {"EMQ_TEST_POOL_SECRET"};
  auto pool = start(p);
  const Outcome out = run(*pool, job("x"));
  ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_THAT(out.result, HasSubstr("EMQ_QUEUE=thumbs\n"));
  EXPECT_THAT(out.result, HasSubstr("THUMB_SIZE=64\n"));
  EXPECT_THAT(out.result, HasSubstr("PATH="));
  // A process outlives its jobs: no job variables, the frame says which.
  EXPECT_THAT(out.result, Not(HasSubstr("EMQ_JOB_ID")));
  EXPECT_THAT(out.result, Not(HasSubstr("EMQ_TEST_POOL_VISIBLE")));

  HandlerConfig inherit = c;
  inherit.inherit_env = true;
  p = params(inherit);
  p.secret_env_names = {"EMQ_TEST_POOL_SECRET"};
  auto inheriting = start(p);
  const Outcome all = run(*inheriting, job("x"));
  EXPECT_THAT(all.result, HasSubstr("EMQ_TEST_POOL_VISIBLE=yes"));
  EXPECT_THAT(all.result, Not(HasSubstr("hunter2")));
  ::unsetenv("EMQ_TEST_POOL_SECRET");
  ::unsetenv("EMQ_TEST_POOL_VISIBLE");
}

TEST_F(PoolHandlerTest, ReplyFailuresRetryOrGoToDeadAndKeepTheProcess) {
  auto pool = start(params(python(handler_program("pool_fails.py"))));
  const pid_t pid = only_pid(*pool);
  Outcome out = run(*pool, job("retry"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "failed: retry");
  out = run(*pool, job("permanent"));
  EXPECT_EQ(out.verdict, Verdict::Dead);
  EXPECT_EQ(out.error, "failed: permanent");
  // A failed job is the handler's answer, not its fault.
  EXPECT_EQ(pool->pids(), std::vector<pid_t>{pid});
  EXPECT_EQ(pool->restarts(), 0u);
}

TEST_F(PoolHandlerTest, ALineThatDoesNotParseFailsTheJobAndReplacesTheProcess) {
  auto pool = start(params(python(handler_program("pool_garbage.py"))));
  const pid_t first = only_pid(*pool);
  const Outcome out = run(*pool, job("x"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, StartsWith("pool process " + std::to_string(first) + ": the reply line is not JSON"));
  EXPECT_THAT(out.error, HasSubstr("\"this is not json\""));
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  const pid_t second = only_pid(*pool);
  EXPECT_NE(second, first);
  EXPECT_TRUE(wait_for([&] { return test::group_gone(first); }, 10s));
  EXPECT_TRUE(logs_.contains("warning queue=thumbs pid=" + std::to_string(first) + ": the pool process "));
}

TEST_F(PoolHandlerTest, AReplyForAnotherJobFailsTheJobAndReplacesTheProcess) {
  auto pool = start(params(python(handler_program("pool_wrong_id.py"))));
  const pid_t first = only_pid(*pool);
  const Job j = job("x");
  const Outcome out = run(*pool, j);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error,
            "pool process " + std::to_string(first) + " answered for job \"JOB_someone_else\" while running " + j.id);
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  EXPECT_NE(only_pid(*pool), first);
}

TEST_F(PoolHandlerTest, AProcessThatDiesMidJobFailsItWithItsStatusAndStderr) {
  auto pool = start(params(python(handler_program("pool_dies.py"))));
  const pid_t first = only_pid(*pool);
  const Outcome out = run(*pool, job("x"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "pool process " + std::to_string(first) +
                           " exited during the job (exit code 3: pool_dies: going down mid-job)");
  EXPECT_TRUE(
      logs_.contains("info queue=thumbs pid=" + std::to_string(first) + " stderr: pool_dies: going down mid-job"));
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  EXPECT_NE(only_pid(*pool), first);
}

TEST_F(PoolHandlerTest, AProcessThatClosesItsStdoutFailsTheJobAndIsKilled) {
  auto pool = start(params(python(handler_program("pool_closes_stdout.py"))));
  const pid_t first = only_pid(*pool);
  const Job j = job("x");
  const Outcome out = run(*pool, j);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "pool process " + std::to_string(first) + " closed its stdout during job " + j.id);
  // It would have slept a minute: it was ended instead.
  EXPECT_TRUE(wait_for([&] { return test::group_gone(first); }, 10s));
  EXPECT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
}

TEST_F(PoolHandlerTest, AFloodWithoutNewlineIsCutAtTheLimitAndTheProcessKilled) {
  HandlerConfig c = python(handler_program("pool_flood.py"));
  c.max_output_bytes = 1 << 20;
  auto pool = start(params(c));
  const pid_t first = only_pid(*pool);
  const auto started = Clock::now();
  const Outcome out = run(*pool, job("x"));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "pool process " + std::to_string(first) +
                           " wrote more than max_output_bytes (1048576) to stdout without ending the line");
  EXPECT_LT(seconds_since(started), 10);
  EXPECT_TRUE(wait_for([&] { return test::group_gone(first); }, 10s));
}

TEST_F(PoolHandlerTest, AReplyLineLongerThanTheLimitFailsTheJob) {
  HandlerConfig c = config({"/bin/sh", example("echo.sh")});
  c.max_output_bytes = 1000;
  auto pool = start(params(c));
  const pid_t first = only_pid(*pool);
  Outcome out = run(*pool, job(std::string(900, 'a')));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  out = run(*pool, job(std::string(2000, 'a')));
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_THAT(out.error, HasSubstr("pool process " + std::to_string(first) + " wrote a reply of "));
  EXPECT_THAT(out.error, HasSubstr("bytes, past max_output_bytes (1000)"));
}

TEST_F(PoolHandlerTest, PastTimeoutTheProcessGetsSigtermAndIsReplaced) {
  HandlerConfig c = python(handler_program("pool_slow.py"));
  c.timeout_s = 0.5;
  auto pool = start(params(c));
  const pid_t first = only_pid(*pool);
  const auto started = Clock::now();
  Outcome out = run(*pool, job("30"));
  const double took = seconds_since(started);
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "timed out after 0.5s");
  EXPECT_GE(took, 0.5);
  EXPECT_LT(took, 5);
  EXPECT_TRUE(wait_for(
      [&] {
        return logs_.contains("pid=" + std::to_string(first) + " stderr: pool_slow: " + std::to_string(first) +
                              " got SIGTERM");
      },
      10s));
  EXPECT_TRUE(wait_for([&] { return test::group_gone(first); }, 10s));
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  const pid_t second = only_pid(*pool);
  EXPECT_NE(second, first);
  // The job's 0.5 s start when it is handed over; a Python that is still
  // starting on a loaded host would spend them importing.
  ASSERT_TRUE(wait_for(
      [&] {
        return logs_.contains("pid=" + std::to_string(second) + " stderr: pool_slow: " + std::to_string(second) +
                              " ready");
      },
      10s));
  out = run(*pool, job("0"));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, "slept");
}

TEST_F(PoolHandlerTest, AStopTokenEndsTheJobPromptlyAndReplacesTheProcess) {
  auto pool = start(params(python(handler_program("pool_slow.py"))));
  const pid_t first = only_pid(*pool);
  StopToken stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);  // let the job start: a stop before it is another path
    stop.request();
  });
  const auto started = Clock::now();
  const Outcome out = pool->run(job("30"), stop);
  const double took = seconds_since(started);
  stopper.join();
  EXPECT_EQ(out.verdict, Verdict::Retry);
  EXPECT_EQ(out.error, "stopped by the daemon");
  EXPECT_LT(took, 5);
  EXPECT_TRUE(wait_for([&] { return test::group_gone(first); }, 10s));
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  EXPECT_EQ(run(*pool, job("0")).result, "slept");
}

TEST_F(PoolHandlerTest, ProcessesAreRecycledAfterMaxJobsPerProcess) {
  HandlerConfig c = python(handler_program("pool_pid.py"));
  c.max_jobs_per_process = 3;
  auto pool = start(params(c));
  std::vector<std::string> pids;
  std::vector<std::string> counts;
  for (int i = 0; i < 7; ++i) {
    const Outcome out = run(*pool, job("x"));
    ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
    std::istringstream words(out.result);
    std::string pid, count;
    words >> pid >> count;
    pids.push_back(pid);
    counts.push_back(count);
  }
  EXPECT_EQ(counts, (std::vector<std::string>{"1", "2", "3", "1", "2", "3", "1"}));
  EXPECT_EQ(std::set<std::string>(pids.begin(), pids.begin() + 3).size(), 1u);
  EXPECT_EQ(std::set<std::string>(pids.begin() + 3, pids.begin() + 6).size(), 1u);
  EXPECT_EQ(std::set<std::string>(pids.begin(), pids.end()).size(), 3u);
  EXPECT_EQ(pool->restarts(), 2u);
  EXPECT_EQ(restart_times().size(), 2u);
  // Recycled gently: stdin closed, and the process left on its own.
  EXPECT_TRUE(wait_for(
      [&] { return logs_.contains("pid=" + pids[0] + " stderr: pool_pid: " + pids[0] + " stdin closed, exiting"); },
      10s));
  EXPECT_TRUE(logs_.contains("info queue=thumbs pid=" + pids[0] +
                             ": recycling the pool process after 3 jobs (max_jobs_per_process)"));
}

TEST_F(PoolHandlerTest, StderrIsLoggedPerLineWithQueueAndPidEvenBetweenJobs) {
  auto pool = start(params(python(handler_program("pool_pid.py"))));
  const std::string pid = std::to_string(only_pid(*pool));
  // Written at start, before any job: the watcher logs it.
  EXPECT_TRUE(wait_for(
      [&] { return logs_.contains("info queue=thumbs pid=" + pid + " stderr: pool_pid: " + pid + " ready"); }, 10s));
  const Job j = job("x");
  ASSERT_EQ(run(*pool, j).verdict, Verdict::Complete);
  EXPECT_TRUE(wait_for(
      [&] { return logs_.contains("info queue=thumbs pid=" + pid + " stderr: pool_pid: " + pid + " job " + j.id); },
      10s));
}

TEST_F(PoolHandlerTest, AProcessThatDiesWhileIdleIsReplacedWithoutAJob) {
  auto pool = start(params(python(handler_program("pool_pid.py"))));
  const pid_t first = only_pid(*pool);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  ASSERT_TRUE(wait_for([&] { return pool->restarts() == 1; }, 10s));
  const pid_t second = only_pid(*pool);
  EXPECT_NE(second, first);
  EXPECT_TRUE(logs_.contains("warning queue=thumbs pid=" + std::to_string(first) +
                             ": the pool process exited while it had no job (killed by signal SIGKILL"));
  const Outcome out = run(*pool, job("x"));
  EXPECT_EQ(out.verdict, Verdict::Complete) << out.error;
  EXPECT_EQ(out.result, std::to_string(second) + " 1");
}

TEST_F(PoolHandlerTest, ExtraLinesAfterAReplyReplaceTheProcessButTheJobStands) {
  auto pool = start(params(python(handler_program("pool_two_lines.py"))));
  for (int i = 1; i <= 4; ++i) {
    const Outcome out = run(*pool, job("x"));
    // An answered job resets the backoff: each replacement is immediate.
    EXPECT_EQ(out.verdict, Verdict::Complete) << "job " << i << ": " << out.error;
    EXPECT_EQ(out.result, "first");
    ASSERT_TRUE(wait_for([&] { return pool->restarts() == static_cast<std::uint64_t>(i); }, 10s)) << i;
  }
}

TEST_F(PoolHandlerTest, AProcessThatKeepsDyingIsRestartedWithGrowingDelays) {
  // A shell, not Python: a process that lives kProvenAfter (1 s) counts as
  // up and is given the job, and a Python at load 15 took that long to
  // start and die.
  auto pool = start(params(config({"/bin/sh", "-c", "echo 'pool_dies: cannot start' >&2; exit 3"})));
  ASSERT_TRUE(wait_for([&] { return pool->restarts() >= 4; }, 30s));
  const std::vector<Clock::time_point> t = restart_times();
  ASSERT_GE(t.size(), 4u);
  // backoff {100 ms, x2, no jitter}: the 1st replacement at once, then
  // 100, 200, 400 ms before each next one (plus the process's own life).
  const auto gap = [&](std::size_t i) { return std::chrono::duration<double>(t[i] - t[i - 1]).count(); };
  EXPECT_GE(gap(1), 0.100);
  EXPECT_GE(gap(2), 0.200);
  EXPECT_GE(gap(3), 0.400);
  EXPECT_TRUE(logs_.contains("stderr: pool_dies: cannot start"));

  // The pool says it cannot take jobs, and why: the claim loop then claims
  // none for it.
  EXPECT_THAT(pool->not_ready(), HasSubstr("no pool process is up"));
  EXPECT_THAT(pool->not_ready(), HasSubstr("pool_dies: cannot start"));
  // A job already claimed goes back at once, uncounted (it never ran),
  // instead of waiting for a process that keeps dying, saying why.
  const auto started = Clock::now();
  const Outcome out = run(*pool, job("x"));
  EXPECT_EQ(out.verdict, Verdict::Release);
  EXPECT_THAT(out.error, HasSubstr("pool_dies: cannot start"));
  EXPECT_LT(seconds_since(started), 5);
}

TEST_F(PoolHandlerTest, JobsRunConcurrentlyOnePerProcess) {
  auto pool = start(params(python(handler_program("pool_pid.py")), 4));
  ASSERT_TRUE(wait_for([&] { return pool->pids().size() == 4; }, 10s));
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<Outcome> outcomes;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Job j;
        j.queue = "thumbs";
        j.id = "JOB_t" + std::to_string(t) + "_" + std::to_string(i);
        j.payload = "x";
        StopToken stop;
        Outcome out = pool->run(j, stop);
        std::lock_guard<std::mutex> lock(mu);
        outcomes.push_back(std::move(out));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(outcomes.size(), 100u);
  std::map<std::string, int> jobs_per_pid;
  for (const Outcome& out : outcomes) {
    ASSERT_EQ(out.verdict, Verdict::Complete) << out.error;
    jobs_per_pid[out.result.substr(0, out.result.find(' '))]++;
  }
  // Every job went to one of the pool's four processes, none was replaced.
  EXPECT_LE(jobs_per_pid.size(), 4u);
  EXPECT_EQ(pool->restarts(), 0u);
}

TEST_F(PoolHandlerTest, ShutdownClosesStdinAndWaitsForEveryProcess) {
  auto pool = start(params(python(handler_program("pool_pid.py")), 3));
  ASSERT_TRUE(wait_for([&] { return pool->pids().size() == 3; }, 10s));
  const std::vector<pid_t> pids = pool->pids();
  ASSERT_EQ(run(*pool, job("x")).verdict, Verdict::Complete);
  pool->shutdown();
  for (pid_t pid : pids) {
    EXPECT_TRUE(test::group_gone(pid)) << pid;
    EXPECT_TRUE(logs_.contains("pid=" + std::to_string(pid) + " stderr: pool_pid: " + std::to_string(pid) +
                               " stdin closed, exiting"))
        << pid;
  }
  EXPECT_TRUE(pool->pids().empty());
  const Outcome after = run(*pool, job("x"));
  EXPECT_EQ(after.verdict, Verdict::Retry);
  EXPECT_EQ(after.error, "the pool is shutting down");
}

TEST_F(PoolHandlerTest, ShutdownKillsAProcessThatIgnoresEofAfterTheGrace) {
  HandlerConfig c = python(handler_program("pool_ignores_eof.py"));
  c.kill_grace_s = 0.3;
  auto pool = start(params(c));
  const pid_t pid = only_pid(*pool);
  ASSERT_EQ(run(*pool, job("x")).verdict, Verdict::Complete);
  const auto started = Clock::now();
  pool->shutdown();
  const double took = seconds_since(started);
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 10);
  EXPECT_TRUE(test::group_gone(pid));
  EXPECT_TRUE(logs_.contains("did not exit within kill_grace_s (0.3s); killing it"));
}

TEST_F(PoolHandlerTest, StartRefusesACommandThatCannotRun) {
  PoolHandler pool(params(config({"/nonexistent/pool-handler"})));
  try {
    pool.start();
    FAIL() << "start() accepted a missing program";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), StartsWith("queue thumbs: pool handler: cannot run '/nonexistent/pool-handler'"));
  }
}

}  // namespace
}  // namespace echomq::daemon
