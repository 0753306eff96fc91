// EMQ.COMPLETE_FLOW and EMQ.FAIL_FLOW against their scripts, where the
// differential run does not reach: every refusal with the script's text to
// the byte and nothing written, the caller's ACL on the deps and results
// keys the module builds from the roots, and WATCH seeing exactly the keys
// each script writes. (Layout, wire identity and key specs: module_test;
// effects, events and replies over random runs: differential_test.)
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/scripts.h"
#include "echomq/transitions.h"
#include "keyspace_dump.h"
#include "module_server.h"
#include "native_call.h"
#include "valkey_server.h"
#include "watched_keys.h"

namespace echomq::test {
namespace {

class ModuleFlow : public ::testing::Test {
 protected:
  ModuleFlow() : server(with_module()), raw(Connection::open(server.options())), q("mflow") {
    Executor(choosing(server, ExecutorChoice::Native)).ensure_connected();  // sets {emq}:version
  }

  // A job held by the lease epoch 1, planted as claim leaves it, with the
  // flow fields given (parent, children).
  void plant_active(const QueueKeys& in, const std::string& id, const std::vector<std::string>& fields) {
    Command row{"HSET", in.row(id), "state", "active", "attempts", "1", "lease_epoch", "1", "payload", "p"};
    row.insert(row.end(), fields.begin(), fields.end());
    ASSERT_FALSE(raw.command(row).is_error());
    ASSERT_FALSE(raw.command({"ZADD", in.active, "9999999999999", id}).is_error());
  }

  // Sends call both ways (EMQ.* and EVAL) from the same keyspace: each
  // must refuse it with the same text and write nothing.
  void expect_same_refusal(const ScriptCall& call, const std::string& code) {
    const Command native = native_command(call);
    SCOPED_TRACE(native[0] + " " + native[native.size() - 1]);
    const Keyspace before = dump_keyspace(raw);
    Reply a = raw.command(native), b = raw.command(eval_command(call));
    ASSERT_TRUE(a.is_error()) << "not refused: " << a.integer;
    EXPECT_EQ(a.str.rfind(code + " ", 0), 0u) << a.str;
    EXPECT_EQ(a.str, b.str);
    std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(raw), 0);
    EXPECT_TRUE(diff.empty()) << "a refused call wrote: " << (diff.empty() ? "" : diff.front());
  }

  ValkeyServer server;
  Connection raw;
  QueueKeys q;
};

TEST_F(ModuleFlow, EveryRefusalIsTheScriptsToTheByteAndWritesNothing) {
  const std::string child = mint_job_id(), parent = mint_job_id(), broken = mint_job_id();
  plant_active(q, child, {"parent", q.ref(parent)});
  plant_active(q, broken, {"parent", q.ref(parent), "failures", "1.5"});
  const Lease held{child, 1};
  const FailArgs dies{"boom", 1, 0, false};
  for (const char* keep : {"-1", "abc", "1000000000001", ""}) {
    ScriptCall c = complete_call(q, held, 0, "r", FlowMode::Flow);
    c.args[2] = keep;
    expect_same_refusal(c, "EMQARG");
  }
  ScriptCall kind = complete_call(q, held, 0, "r", FlowMode::Flow);
  kind.keys[0] = q.row_root + "TASK_1";
  kind.args[0] = "TASK_1";
  expect_same_refusal(kind, "EMQKIND");
  for (auto [at, bad] : std::vector<std::pair<std::size_t, std::string>>{{3, "0"}, {4, "x"}, {5, "2"}}) {
    ScriptCall c = fail_call(q, held, dies, FlowMode::Flow);
    c.args[at] = bad;
    expect_same_refusal(c, "EMQARG");
  }
  expect_same_refusal(fail_call(q, {broken, 1}, dies, FlowMode::Flow), "EMQROW");
  for (const char* length : {"0", "10000001", "many"}) {
    for (ScriptCall c : {complete_call(q, held, 0, "r", FlowMode::Flow), fail_call(q, held, dies, FlowMode::Flow)}) {
      c = with_events(std::move(c), q, 5);
      c.args.back() = length;
      expect_same_refusal(c, "EMQARG");
    }
  }
  // A child's outbox, or the stream, of another type: checked before the
  // first write, so the job is not stranded out of every set.
  ASSERT_EQ(raw.command({"SET", q.outbox, "not a zset"}).str, "OK");
  expect_same_refusal(complete_call(q, held, 0, "r", FlowMode::Flow), "WRONGTYPE");
  expect_same_refusal(fail_call(q, held, dies, FlowMode::Flow), "WRONGTYPE");
  ASSERT_EQ(raw.command({"DEL", q.outbox}).integer, 1);
  ASSERT_EQ(raw.command({"SET", q.events, "not a stream"}).str, "OK");
  expect_same_refusal(with_events(complete_call(q, held, 0, "r", FlowMode::Flow), q, 5), "WRONGTYPE");
}

// A parent's deps and results are keys the module builds from the roots:
// the server never checks them against the caller's ACL, so the module
// does, before it writes, as the server checks the script's DEL.
TEST_F(ModuleFlow, AParentsDepsAndResultsAreCheckedAgainstTheCallersAcl) {
  const std::string parent = mint_job_id();
  plant_active(q, parent, {"children", "1"});
  ASSERT_EQ(raw.command({"SADD", q.deps(parent), "mflow:JOB_gone"}).integer, 1);
  ASSERT_EQ(raw.command({"HSET", q.results(parent), "mflow:JOB_c", "c:ok"}).integer, 1);
  Command declared_only{"ACL", "SETUSER", "declared", "on", ">pw", "+@all", "~{emq}:*", "~" + q.row(parent)};
  for (const std::string& k : {q.active, q.stats, q.outbox, q.deps_root, q.results_root, q.uniq_root, q.gq_root,
                               q.grp_root, q.gact_root, q.gidx, q.rot, q.groups, q.gwait}) {
    declared_only.push_back("~" + k);
  }
  ASSERT_EQ(raw.command(declared_only).str, "OK");
  Connection user = Connection::open(server.options());
  ASSERT_EQ(user.command({"AUTH", "declared", "pw"}).str, "OK");

  const ScriptCall call = complete_call(q, {parent, 1}, 0, "ran", FlowMode::Flow);
  const Keyspace before = dump_keyspace(raw);
  Reply refused = user.command(native_command(call));
  EXPECT_EQ(refused.str, "ERR ACL failure in EMQ.COMPLETE_FLOW: No permissions to access a key");
  std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(raw), 0);
  EXPECT_TRUE(diff.empty()) << "a refused call wrote: " << (diff.empty() ? "" : diff.front());
  std::map<std::string, std::string> entry = newest_acl_log_entry(raw);
  EXPECT_EQ(entry["reason"], "key");
  EXPECT_EQ(entry["object"], q.deps(parent));

  // The script is refused the same key by the server (at its DEL, after
  // its other writes: the parent is planted again below).
  EXPECT_EQ(user.command(eval_command(call)).str.rfind("ERR ACL failure in script: No permissions to access a key", 0),
            0u);
  // Allowed them too (to delete them: write alone), the same user completes
  // the parent, and its deps and results go.
  ASSERT_EQ(raw.command({"ACL", "SETUSER", "declared", "%W~" + q.deps_root + "*", "%W~" + q.results_root + "*"}).str,
            "OK");
  plant_active(q, parent, {"children", "1"});
  Reply ok = user.command(native_command(call));
  EXPECT_EQ(ok.integer, 1) << ok.str;
  EXPECT_EQ(raw.command({"EXISTS", q.deps(parent), q.results(parent)}).integer, 0);
}

// WATCH sees the flow forms' writes where the scripts' commands write: a
// child's row, active, stats and the outbox; a parent's deps and results
// too; a dying child's dead set and outbox. The same on both executors.
TEST_F(ModuleFlow, WatchSeesExactlyTheKeysTheScriptsWrite) {
  for (ExecutorChoice choice : {ExecutorChoice::Scripted, ExecutorChoice::Native}) {
    SCOPED_TRACE(choice == ExecutorChoice::Native ? "native" : "scripted");
    Executor e(choosing(server, choice));
    e.ensure_connected();
    ASSERT_EQ(e.native(), choice == ExecutorChoice::Native) << "the executor chose the other path";
    const QueueKeys w(choice == ExecutorChoice::Native ? "wflow-native" : "wflow-scripted");
    const std::string child = mint_job_id(), parent = mint_job_id(), dying = mint_job_id();
    plant_active(w, child, {"parent", w.ref(parent)});
    ASSERT_EQ(raw.command({"PEXPIRE", w.row(child), "600000"}).integer, 1);  // persisted: a write too
    plant_active(w, parent, {"children", "1"});
    ASSERT_EQ(raw.command({"SADD", w.deps(parent), w.ref(child)}).integer, 1);
    ASSERT_EQ(raw.command({"HSET", w.results(parent), w.ref(child), "c:ok"}).integer, 1);
    plant_active(w, dying, {"parent", w.ref(parent)});
    const std::vector<std::string> sets{w.active, w.pending, w.delayed, w.dead, w.stats, w.outbox};
    auto keys = [&](const std::string& id) {
      std::vector<std::string> k{w.row(id), w.deps(id), w.results(id)};
      k.insert(k.end(), sets.begin(), sets.end());
      return k;
    };
    using Keys = std::vector<std::string>;

    auto complete_child = [&] { EXPECT_EQ(e.eval(complete_call(w, {child, 1}, 0, "r", FlowMode::Flow)).integer, 1); };
    EXPECT_EQ(signalled(server, keys(child), complete_child), (Keys{w.row(child), w.active, w.stats, w.outbox}));
    auto complete_parent = [&] { EXPECT_EQ(e.eval(complete_call(w, {parent, 1}, 0, "r", FlowMode::Flow)).integer, 1); };
    EXPECT_EQ(signalled(server, keys(parent), complete_parent),
              (Keys{w.row(parent), w.deps(parent), w.results(parent), w.active, w.stats}));
    auto fail_child = [&] {
      EXPECT_EQ(e.eval(fail_call(w, {dying, 1}, {"boom", 1, 0, false}, FlowMode::Flow)).integer, 2);
    };
    EXPECT_EQ(signalled(server, keys(dying), fail_child), (Keys{w.row(dying), w.active, w.dead, w.stats, w.outbox}));
  }
}

}  // namespace
}  // namespace echomq::test
