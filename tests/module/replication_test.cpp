// The module's effects reach replicas and the AOF as plain commands: a
// replica without the module, and the primary restarted from its AOF, hold
// the keys the primary held after a native run.
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr std::int64_t kReplicaToleranceMs = 2000;

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

// Groups through the module: weights, a cap, a rate and a pause, grouped
// and ungrouped jobs mixed; leases ended every way, so that the rotation,
// the group index, gwait and each group's keys are written in every shape.
void native_group_run(Executor& x, const std::string& queue, std::int64_t events) {
  QueueKeys q(queue);
  const auto run = [&](ScriptCall c) { return x.eval(with_events(std::move(c), q, events)); };
  group_set(x, q, "heavy", "weight=3");
  group_set(x, q, "capped", "max_active=1");
  group_set(x, q, "rated", "rate_max=2 rate_window_ms=3600000");
  group_set(x, q, "held", "paused=1");
  const std::vector<std::string> groups = {"heavy", "light", "capped", "rated", "held", ""};
  for (int i = 0; i < 36; ++i) {
    EnqueueOptions o;
    o.group = groups[i % groups.size()];
    run(enqueue_call(q, mint_job_id(), "grouped " + std::to_string(i), o));
  }
  std::vector<ClaimedJob> jobs = decode_claim(run(claim_call(q, {600000, 16, 0})));
  ASSERT_GE(jobs.size(), 12u);
  std::vector<Lease> leases;
  for (const ClaimedJob& j : jobs) leases.push_back({j.id, j.lease_epoch});
  for (int i = 0; i < 4; ++i) run(complete_call(q, leases[i], 0, ""));
  for (int i = 4; i < 6; ++i) run(fail_call(q, leases[i], {"now again", 5, 0, false}));
  for (int i = 6; i < 8; ++i) run(fail_call(q, leases[i], {"retry later", 5, 3600000, false}));
  for (int i = 8; i < 10; ++i) run(fail_call(q, leases[i], {"broken", 5, 0, true}));
  for (int i = 10; i < 12; ++i) run(release_call(q, leases[i]));
  run(claim_call(q, {600000, 5, 0}));
  group_set(x, q, "held", "");
}

// One claim's walk takes every grouped job there is: the group index's *
// goes to 0 and out during the walk, whose writes to the rotation and the
// index reach the replica together at its end.
void native_group_drain(Executor& x, const std::string& queue) {
  QueueKeys q(queue);
  for (int i = 0; i < 9; ++i) {
    EnqueueOptions o;
    o.group = "g" + std::to_string(i % 3);
    x.eval(enqueue_call(q, mint_job_id(), "drained " + std::to_string(i), o));
  }
  const std::vector<ClaimedJob> jobs = decode_claim(x.eval(claim_call(q, {600000, 16, 0})));
  ASSERT_EQ(jobs.size(), 9u);
  for (const ClaimedJob& j : jobs) x.eval(complete_call(q, {j.id, j.lease_epoch}, 0, ""));
}

void native_run(Executor& x) {
  native_run(x, "repl", 0);
  native_run(x, "repl-events", 7);
  native_flow_run(x, "repl-flow", 0);
  native_flow_run(x, "repl-flow-events", 7);
  native_group_run(x, "repl-groups", 0);
  native_group_run(x, "repl-groups-events", 7);
  native_group_drain(x, "repl-groups-drain");
}

ValkeyServer::Options with_module(std::vector<std::string> extra_args) {
  ValkeyServer::Options o;
  o.load_module = true;
  o.extra_args = std::move(extra_args);
  return o;
}

ValkeyServer::Options replica_of(const ValkeyServer& primary) {
  ValkeyServer::Options o;
  o.extra_args = {"--replicaof", "127.0.0.1", std::to_string(primary.port())};
  return o;
}

// native_run on the primary, once the replica is online, until the
// replica has acknowledged it.
void run_replicated(const ValkeyServer& primary) {
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
}

TEST(Replication, AReplicaWithoutTheModuleHoldsWhatTheNativePrimaryHolds) {
  ValkeyServer primary(with_module({}));
  ValkeyServer replica(replica_of(primary));
  ASSERT_NO_FATAL_FAILURE(run_replicated(primary));

  Connection pc = Connection::open(primary.options());
  Connection rc = Connection::open(replica.options());
  EXPECT_EQ(rc.command({"MODULE", "LIST"}).elements.size(), 0u) << "the replica must not need the module";
  Keyspace want = dump_keyspace(pc);
  std::vector<std::string> diff = keyspace_diff(want, dump_keyspace(rc), kReplicaToleranceMs);
  EXPECT_TRUE(diff.empty()) << diff.size() << " differences, first: " << diff.front();
  EXPECT_GT(want.size(), 5u);
  EXPECT_EQ(want.count(QueueKeys("repl-events").events), 1u) << "the events stream is part of what is replicated";
  EXPECT_EQ(want.count(QueueKeys("repl-groups").rot), 1u) << "the group run must leave a rotation";
}

// An events stream as a reader resuming from an id sees it: each entry
// with its id, then what XINFO says of its history (the entries kept and
// ever added, the last id given, the largest id deleted).
std::vector<std::string> stream_as_read(Connection& c, const std::string& key) {
  std::vector<std::string> out;
  for (const Reply& e : c.command({"XRANGE", key, "-", "+"}).elements) {
    std::string line = e.elements[0].str;
    for (const Reply& f : e.elements[1].elements) line += ' ' + f.str;
    out.push_back(line);
  }
  const Reply info = c.command({"XINFO", "STREAM", key});
  for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
    const std::string& name = info.elements[i].str;
    const Reply& v = info.elements[i + 1];
    if (name == "length" || name == "entries-added" || name == "last-generated-id" || name == "max-deleted-entry-id") {
      out.push_back(name + " " + (v.type == Reply::Type::Integer ? std::to_string(v.integer) : v.str));
    }
  }
  return out;
}

const std::vector<std::string> kEventStreams = {QueueKeys("repl-events").events, QueueKeys("repl-flow-events").events};

// Nodes of 4 entries on the primary, so that its MAXLEN ~ trims after
// nearly every entry and leaves lengths an exact trim would not; the
// replica keeps the default nodes of 100, where a MAXLEN ~ 7 replayed
// would trim differently or not at all.
TEST(Replication, AReplicaHoldsEveryEventUnderThePrimarysIdAfterTheSameTrims) {
  ValkeyServer primary(with_module({"--stream-node-max-entries", "4"}));
  ValkeyServer replica(replica_of(primary));
  ASSERT_NO_FATAL_FAILURE(run_replicated(primary));

  Connection pc = Connection::open(primary.options());
  Connection rc = Connection::open(replica.options());
  for (const std::string& key : kEventStreams) {
    const std::vector<std::string> want = stream_as_read(pc, key);
    const std::int64_t kept = pc.command({"XLEN", key}).integer;
    ASSERT_GT(kept, 0) << key;
    // The core run appends well over its MAXLEN (the flow run does not).
    const bool trimmed = std::find(want.begin(), want.end(), "entries-added " + std::to_string(kept)) == want.end();
    if (key == kEventStreams[0]) EXPECT_TRUE(trimmed) << key << " was never trimmed: the run must append more";
    EXPECT_EQ(stream_as_read(rc, key), want) << key;
  }
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
  o.extra_args = {"--appendfsync", "always", "--stream-node-max-entries", "4"};
  ValkeyServer server(o);
  Keyspace before;
  std::vector<std::vector<std::string>> streams_before;
  {
    Executor x(native_on(server));
    native_run(x);
    Connection c = Connection::open(server.options());
    before = dump_keyspace(c);
    for (const std::string& key : kEventStreams) streams_before.push_back(stream_as_read(c, key));
  }
  server.stop();
  const std::string aof = read_dir(server.dir() + "/appendonlydir");
  EXPECT_EQ(aof.find("EMQ."), std::string::npos) << "the AOF must hold plain commands, not EMQ.*";
  EXPECT_NE(aof.find("MULTI"), std::string::npos) << "each transition's commands come in MULTI/EXEC";
  server.start();
  Connection c = Connection::open(server.options());
  std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(c), kReplicaToleranceMs);
  EXPECT_TRUE(diff.empty()) << diff.size() << " differences, first: " << diff.front();
  for (std::size_t i = 0; i < kEventStreams.size(); ++i) {
    EXPECT_EQ(stream_as_read(c, kEventStreams[i]), streams_before[i]) << kEventStreams[i] << " under other ids";
  }
}

}  // namespace
}  // namespace echomq::test
