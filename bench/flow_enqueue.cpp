// emq_bench_flow_enqueue: enqueues `flows` flows, each a parent in one
// queue and `children` children in another, through libechomq's
// enqueue_flow (one call per flow: the parent's round trip, then its
// children's), and prints one JSON line: {"flows":F,"jobs":N,"seconds":S}.
//
// Ids are given, not minted: flow f's parent is JOB_ + f, its children
// JOB_ + (flows + f * children + k), each a 12-digit number, so that
// emq_bench_enqueue --first puts the very same ids in the same queues for
// the plain side of the flows row (the same bytes, the same pending order).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/flows.h"
#include "echomq/url.h"
#include "job_ids.h"

int main(int argc, char** argv) {
  CLI::App app{"Enqueue flows (a parent and its children) through libechomq's enqueue_flow."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string parent_queue = "parents";
  std::string child_queue = "children";
  std::string payload = "x";
  long long flows = 1000;
  int children = 10;
  app.add_option("--url", url, "the server");
  app.add_option("--parent-queue", parent_queue, "the queue of the parents");
  app.add_option("--child-queue", child_queue, "the queue of the children");
  app.add_option("--flows", flows, "how many flows")->check(CLI::PositiveNumber);
  app.add_option("--children", children, "children of each parent")->check(CLI::Range(1, 100000));
  app.add_option("--payload", payload, "the payload of every job");
  CLI11_PARSE(app, argc, argv);

  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    long long jobs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long long f = 0; f < flows; ++f) {
      echomq::FlowNode parent;
      parent.queue = parent_queue;
      parent.payload = payload;
      parent.id = emq_bench::job_id(f);
      parent.children.reserve(static_cast<std::size_t>(children));
      for (int k = 0; k < children; ++k) {
        echomq::FlowNode child;
        child.queue = child_queue;
        child.payload = payload;
        child.id = emq_bench::job_id(flows + f * children + k);
        parent.children.push_back(std::move(child));
      }
      const echomq::FlowJob done = echomq::enqueue_flow(x, parent);
      if (done.result != echomq::EnqueueResult::Enqueued) {
        std::fprintf(stderr, "emq_bench_flow_enqueue: %s was already there: start from an empty server\n",
                     done.id.c_str());
        return 3;
      }
      jobs += 1 + static_cast<long long>(done.children.size());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"flows\":%lld,\"jobs\":%lld,\"seconds\":%.6f}\n", flows, jobs, seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_flow_enqueue: %s\n", e.what());
    return 1;
  }
}
