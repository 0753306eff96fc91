// emq_bench_latency_producer: enqueues `jobs` jobs one at a time, `every_ms`
// apart (on a fixed schedule, so a slow send does not push the rest back),
// each with its send time as payload: the CLOCK_MONOTONIC nanosecond read
// just before the enqueue call. The latency plugin subtracts it from its
// own reading of the same clock when the job reaches it.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "monotonic.h"

int main(int argc, char** argv) {
  CLI::App app{"Enqueue jobs spaced in time, each carrying its send time."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "latency";
  long long jobs = 1000;
  int every_ms = 5;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the queue");
  app.add_option("--jobs", jobs, "how many jobs")->check(CLI::PositiveNumber);
  app.add_option("--every-ms", every_ms, "spacing between jobs")->check(CLI::Range(1, 60000));
  CLI11_PARSE(app, argc, argv);

  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    const echomq::QueueKeys q(queue);
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(every_ms);
    for (long long i = 0; i < jobs; ++i) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(every_ms * i));
      char id[32];
      std::snprintf(id, sizeof id, "JOB_lat%09lld", i);
      echomq::enqueue(x, q, id, std::to_string(monotonic_ns()));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_latency_producer: %s\n", e.what());
    return 1;
  }
}
