// Throughput sanity: 1000 jobs through each kind from 8 threads at
// concurrency 8, every outcome checked, the rate printed (not asserted: the
// machine is shared). exec runs /bin/true (the cost of a process per job),
// pool the Python example, plugin the no-op example (the daemon's own cost).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "handlers/exec_handler.h"
#include "handlers/plugin_handler.h"
#include "handlers/pool_handler.h"
#include "process_probe.h"

namespace echomq::daemon {
namespace {

constexpr int kJobs = 1000;
constexpr int kThreads = 8;

// Runs kJobs through `handler` from kThreads threads; counts the outcomes
// that are not `want`; prints the rate.
void run_batch(const std::string& label, Handler& handler, const std::string& payload, const std::string& want) {
  std::atomic<int> next{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  const auto started = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < kJobs; i = next++) {
        Job job;
        job.queue = "bench";
        job.id = "JOB_" + std::to_string(i);
        job.payload = payload;
        StopToken stop;
        const Outcome out = handler.run(job, stop);
        if (out.verdict != Outcome::Verdict::Complete || out.result != want) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("[ throughput ] %-32s %d jobs from %d threads in %.2f s: %.0f jobs/s\n", label.c_str(), kJobs, kThreads,
              s, kJobs / s);
  EXPECT_EQ(wrong.load(), 0) << label;
}

class HandlerThroughput : public ::testing::Test {
 protected:
  test::LogCapture logs_;  // keeps the pool's start and stop lines off the console
};

TEST_F(HandlerThroughput, ExecTrue) {
  HandlerConfig c;
  c.command = {"/bin/true"};
  ExecHandler handler({"bench", c, {}});
  handler.start();
  run_batch("exec /bin/true", handler, "payload", "");
}

TEST_F(HandlerThroughput, PoolPythonExample) {
  PoolHandler::Params p;
  p.queue = "bench";
  p.handler.command = {"/usr/bin/python3", std::string(EMQ_SOURCE_DIR) + "/examples/handlers/pool/echo_upper.py"};
  p.concurrency = kThreads;
  PoolHandler handler(p);
  handler.start();
  run_batch("pool echo_upper.py", handler, "payload", "PAYLOAD");
  EXPECT_EQ(handler.restarts(), 0u);
  handler.shutdown();
}

TEST_F(HandlerThroughput, PluginNoop) {
  HandlerConfig c;
  c.type = HandlerConfig::Type::Plugin;
  c.path = std::string(EMQ_LIB_DIR) + "/libemq_noop.so";
  PluginHandler handler({"bench", c});
  handler.start();
  run_batch("plugin libemq_noop.so", handler, "payload", "");
  handler.shutdown();
}

}  // namespace
}  // namespace echomq::daemon
