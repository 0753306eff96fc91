// The claim loop's reads for flows against a real valkey-server: a parent
// runs with its children's results, and a queue of leaves (children, no
// parents) costs what a plain queue costs: no read of results, no look at
// a row for `children`, per job claimed (PROTOCOL.md, "Flows": meta
// `parents`, a row's `children`).
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "claim_loop.h"
#include "echomq/flows.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::seconds;

// Completes each job with its children's results as "<outcome>:<text>,...".
class ChildrenEcho : public Handler {
 public:
  Outcome run(const Job& job, const StopToken&) override {
    std::string seen;
    for (const ChildResult& c : job.children) seen += std::string(to_string(c.outcome)) + ":" + c.text + ",";
    std::lock_guard<std::mutex> lock(mu_);
    seen_[job.id] = seen;
    return Outcome::complete(seen);
  }
  std::string seen(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_.count(id) ? seen_[id] : "(not run)";
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> seen_;
};

class ClaimLoopFlows : public ::testing::Test {
 protected:
  static QueueConfig queue(const std::string& name) {
    QueueConfig q;
    q.name = name;
    q.concurrency = 4;
    q.poll_max_ms = 20;
    return q;
  }
  // By HGET, which server.calls("hgetall") leaves alone (stats() is an HGETALL).
  std::int64_t completed(const QueueKeys& keys) {
    const Reply r = x.command({"HGET", keys.stats, "completed"});
    return r.type == Reply::Type::String ? std::stoll(r.str) : 0;
  }
  // Runs a claim loop on `name` until `jobs` of its jobs completed.
  void run_until(const std::string& name, std::int64_t jobs) {
    ClaimLoop loop(queue(name), server.options(), handler, metrics);
    loop.start();
    ASSERT_TRUE(test::wait_for([&] { return completed(QueueKeys(name)) >= jobs; }, seconds(20))) << name;
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  Metrics metrics{{"plain", "leaves", "parents"}, "test"};
  ChildrenEcho handler;
};

TEST_F(ClaimLoopFlows, AQueueOfLeavesReadsNoResultsAndNoRowsBesideItsClaims) {
  const QueueKeys plain("plain"), leaves("leaves");
  for (int i = 0; i < 20; ++i) enqueue(x, plain, mint_job_id(), "p");
  FlowNode root;
  root.queue = "parents";
  root.payload = "root";
  for (int i = 0; i < 20; ++i) root.children.push_back({"leaves", "leaf", 0, "fail", "", {}});
  enqueue_flow(x, root);

  const std::int64_t hgetall = server.calls("hgetall"), hexists = server.calls("hexists");
  run_until("plain", 20);
  EXPECT_EQ(server.calls("hgetall") - hgetall, 0);
  run_until("leaves", 20);
  EXPECT_EQ(server.calls("hgetall") - hgetall, 0) << "a leaf's results were read";
  EXPECT_EQ(server.calls("hexists") - hexists, 0) << "a leaf's row was looked at for children";
}

TEST_F(ClaimLoopFlows, AParentRunsWithItsChildrensResultsAndAJobBesideItWithNone) {
  const QueueKeys parents("parents");
  const std::string parent = mint_job_id(), c1 = mint_job_id(), c2 = mint_job_id();
  // A parent told of both its children (as the drainer tells it), and a
  // plain job in the same queue.
  FlowNode root{"parents", "root", 0, "ignore", parent, {}};
  root.children = {{"leaves", "a", 0, "fail", c1, {}}, {"leaves", "b", 0, "fail", c2, {}}};
  enqueue_flow(x, root);
  x.eval(child_done_call(parents, parent, "leaves:" + c1, ChildOutcome::Completed, "ra"));
  x.eval(child_done_call(parents, parent, "leaves:" + c2, ChildOutcome::Dead, "eb"));
  const std::string lone = mint_job_id();
  enqueue(x, parents, lone, "alone");

  const std::int64_t hgetall = server.calls("hgetall");
  run_until("parents", 2);
  EXPECT_EQ(handler.seen(parent), "completed:ra,dead:eb,");
  EXPECT_EQ(handler.seen(lone), "");
  EXPECT_EQ(server.calls("hgetall") - hgetall, 1) << "only the parent's results are read";
}

}  // namespace
}  // namespace echomq::daemon
