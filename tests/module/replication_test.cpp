// The module's effects reach replicas and the AOF as plain commands: a
// replica without the module, and the primary restarted from its AOF, hold
// the keys the primary held after a native run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/flow_batches.h"
#include "echomq/flows.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "keyspace_dump.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

constexpr std::int64_t kToleranceMs = 2000;

ConnectionOptions native_on(const ValkeyServer& s) {
  ConnectionOptions o = s.options();
  o.executor = ExecutorChoice::Native;
  return o;
}

// Every core transition, each outcome at least once, through the module;
// on a second queue with its events stream, which the run trims.
void native_run(Executor& x, const std::string& queue, std::int64_t events) {
  QueueKeys q(queue);
  const auto run = [&](ScriptCall c) { return x.eval(with_events(std::move(c), q, events)); };
  for (int i = 0; i < 40; ++i) {
    run(enqueue_call(q, mint_job_id(), "payload " + std::to_string(i) + std::string(1, '\0')));
  }
  std::vector<ClaimedJob> jobs = decode_claim(run(claim_call(q, {600000, 30, 0})));
  ASSERT_EQ(jobs.size(), 30u);
  std::vector<Lease> leases;
  for (const ClaimedJob& j : jobs) leases.push_back({j.id, j.lease_epoch});
  extend(x, q, 900000, {leases.begin(), leases.begin() + 10});
  for (int i = 0; i < 5; ++i) run(complete_call(q, leases[i], 0, ""));
  for (int i = 5; i < 10; ++i) run(complete_call(q, leases[i], 3600000, "kept"));
  for (int i = 10; i < 15; ++i) run(fail_call(q, leases[i], {"retry later", 5, 3600000, false}));
  for (int i = 15; i < 18; ++i) run(fail_call(q, leases[i], {"now again", 5, 0, false}));
  for (int i = 18; i < 22; ++i) run(fail_call(q, leases[i], {"broken", 5, 0, true}));
  for (int i = 22; i < 26; ++i) run(release_call(q, leases[i]));
  run(complete_call(q, leases[0], 0, "a late answer changes nothing"));
  run(claim_call(q, {600000, 100, 0}));  // pops pending to empty: its key goes
}

// The flow forms: children kept in the outbox (one with an expiry a keep
// gives, one dead), told to their parent, which then runs and has its deps
// and results deleted.
void native_flow_run(Executor& x, const std::string& queue, std::int64_t events) {
  QueueKeys q(queue);
  const auto run = [&](ScriptCall c) { return x.eval(with_events(std::move(c), q, events)); };
  FlowNode root{queue, "parent", 0, "ignore", "", {}};
  for (int i = 0; i < 3; ++i) root.children.push_back({queue, "child " + std::to_string(i), 0, "fail", "", {}});
  const FlowJob flow = enqueue_flow(x, root);
  std::vector<ClaimedJob> kids = decode_claim(run(claim_call(q, {600000, 10, 0})));
  ASSERT_EQ(kids.size(), 3u);
  run(complete_call(q, {kids[0].id, kids[0].lease_epoch}, 0, "one", FlowMode::Flow));
  run(complete_call(q, {kids[1].id, kids[1].lease_epoch}, 3600000, "two", FlowMode::Flow));
  run(fail_call(q, {kids[2].id, kids[2].lease_epoch}, {"gone", 5, 0, true}, FlowMode::Flow));
  std::vector<ChildNews> news;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    news.push_back({queue, flow.id, q.ref(kids[i].id), i < 2 ? ChildOutcome::Completed : ChildOutcome::Dead, "t"});
  }
  tell_parents(x, news);
  std::vector<ClaimedJob> parent = decode_claim(run(claim_call(q, {600000, 10, 0})));
  ASSERT_EQ(parent.size(), 1u);
  run(complete_call(q, {parent[0].id, parent[0].lease_epoch}, 0, "ran", FlowMode::Flow));
}

void native_run(Executor& x) {
  native_run(x, "repl", 0);
  native_run(x, "repl-events", 7);
  native_flow_run(x, "repl-flow", 0);
  native_flow_run(x, "repl-flow-events", 7);
}

TEST(Replication, AReplicaWithoutTheModuleHoldsWhatTheNativePrimaryHolds) {
  ValkeyServer::Options p;
  p.load_module = true;
  ValkeyServer primary(p);
  ValkeyServer::Options r;
  r.extra_args = {"--replicaof", "127.0.0.1", std::to_string(primary.port())};
  ValkeyServer replica(r);
  Connection pc = Connection::open(primary.options());
  ASSERT_TRUE(wait_for(
      [&] {
        return pc.command({"INFO", "replication"}).str.find("state=online") != std::string::npos;
      },
      std::chrono::seconds(20)))
      << "the replica did not come online";

  Executor x(native_on(primary));
  native_run(x);
  // WAIT counts the replicas that hold what *this* connection wrote, so it
  // goes on the executor's connection, the one that ran the transitions.
  ASSERT_EQ(x.command({"WAIT", "1", "10000"}).integer, 1) << "the replica did not acknowledge the run";

  Connection rc = Connection::open(replica.options());
  EXPECT_EQ(rc.command({"MODULE", "LIST"}).elements.size(), 0u) << "the replica must not need the module";
  Keyspace want = dump_keyspace(pc);
  std::vector<std::string> diff = keyspace_diff(want, dump_keyspace(rc), kToleranceMs);
  EXPECT_TRUE(diff.empty()) << diff.size() << " differences, first: " << diff.front();
  EXPECT_GT(want.size(), 5u);
  EXPECT_EQ(want.count(QueueKeys("repl-events").events), 1u) << "the events stream is part of what is replicated";
}

std::string read_dir(const std::string& dir) {
  std::string all;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  return all;
}

TEST(Replication, ARestartFromTheAofHoldsWhatTheNativeRunLeft) {
  ValkeyServer::Options o;
  o.load_module = true;
  o.appendonly = true;
  o.extra_args = {"--appendfsync", "always"};
  ValkeyServer server(o);
  Keyspace before;
  {
    Executor x(native_on(server));
    native_run(x);
    Connection c = Connection::open(server.options());
    before = dump_keyspace(c);
  }
  server.stop();
  const std::string aof = read_dir(server.dir() + "/appendonlydir");
  EXPECT_EQ(aof.find("EMQ."), std::string::npos) << "the AOF must hold plain commands, not EMQ.*";
  EXPECT_NE(aof.find("MULTI"), std::string::npos) << "each transition's commands come in MULTI/EXEC";
  server.start();
  Connection c = Connection::open(server.options());
  std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(c), kToleranceMs);
  EXPECT_TRUE(diff.empty()) << diff.size() << " differences, first: " << diff.front();
}

}  // namespace
}  // namespace echomq::test
