// The emq module's own contract (PROTOCOL.md, "The native module"): its
// identity, its key specs, its checks before it writes (EMQLAYOUT,
// EMQWIRE), its refusal of a cluster, and how an executor chooses it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/scripts.h"
#include "echomq/transitions.h"
#include "keyspace_dump.h"
#include "module_server.h"
#include "native_call.h"
#include "valkey_server.h"
#include "wait_for.h"
#include "watched_keys.h"

namespace echomq::test {
namespace {

// Every EMQ.* call on queue q (the six core ones and the flow forms of
// complete and fail), each one that would write if let through.
std::vector<ScriptCall> core_calls(const QueueKeys& q, const Lease& held, const std::string& fresh_id) {
  return {enqueue_call(q, fresh_id, "payload"),
          claim_call(q, {30000, 5, 5}),
          extend_call(q, 60000, {held}),
          complete_call(q, held, 0, "done"),
          fail_call(q, held, {"boom", 5, 1000, false}),
          release_call(q, held),
          complete_call(q, held, 0, "done", FlowMode::Flow),
          fail_call(q, held, {"boom", 5, 1000, false}, FlowMode::Flow)};
}

class Module : public ::testing::Test {
 protected:
  Module() : server(with_module()), x(choosing(server, ExecutorChoice::Native)), q("mod") {}

  // A queue with pending jobs and one held lease: every call would write.
  Lease seed() {
    for (int i = 0; i < 3; ++i) enqueue(x, q, mint_job_id(), "p");
    std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
    EXPECT_EQ(jobs.size(), 1u);
    return {jobs.at(0).id, jobs.at(0).lease_epoch};
  }

  // What the ACL's refusal of a key replies: the module names its command;
  // a script says "script", and the server adds where in it.
  static std::string acl_refusal(const std::string& command) {
    return "ERR ACL failure in " + command + ": No permissions to access a key";
  }
  static ::testing::AssertionResult refused_in_script(const Reply& r) {
    if (r.str.rfind(acl_refusal("script"), 0) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the script replied: " << r.str;
  }

  // A connection logged in as the user setuser (ACL SETUSER <name> on >pw ...) makes.
  Connection user_from(Connection& admin, const Command& setuser) {
    EXPECT_EQ(admin.command(setuser).str, "OK");
    Connection user = Connection::open(server.options());
    EXPECT_EQ(user.command({"AUTH", setuser.at(2), "pw"}).str, "OK");
    return user;
  }

  // Sends the command over a plain connection; expects an error starting
  // with code and an unchanged keyspace.
  void expect_refused(const Command& c, const std::string& code) {
    Connection raw = Connection::open(server.options());
    Keyspace before = dump_keyspace(raw);
    Reply r = raw.command(c);
    std::string line;
    for (const std::string& a : c) line += a + " ";
    ASSERT_TRUE(r.is_error()) << line << "was not refused";
    EXPECT_EQ(r.str.rfind(code + " ", 0), 0u) << line << "answered " << r.str;
    std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(raw), 0);
    EXPECT_TRUE(diff.empty()) << line << "wrote: " << (diff.empty() ? "" : diff.front());
  }

  ValkeyServer server;
  Executor x;
  QueueKeys q;
};

TEST_F(Module, ModuleListShowsEmqAndAVersion) {
  Connection raw = Connection::open(server.options());
  Reply r = raw.command({"MODULE", "LIST"});
  ASSERT_EQ(r.elements.size(), 1u);
  const Reply& m = r.elements[0];
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < m.elements.size(); i += 2) {
    fields[m.elements[i].str] = m.elements[i + 1].type == Reply::Type::Integer
                                    ? std::to_string(m.elements[i + 1].integer)
                                    : m.elements[i + 1].str;
  }
  EXPECT_EQ(fields["name"], "emq");
  EXPECT_GT(std::stoll(fields["ver"]), 0);
}

TEST_F(Module, CommandGetkeysSeesEveryKeyOfEveryTransition) {
  Connection raw = Connection::open(server.options());
  for (const ScriptCall& call : core_calls(q, {"JOB_1", 1}, "JOB_2")) {
    Command c{"COMMAND", "GETKEYS"};
    Command n = native_command(call);
    c.insert(c.end(), n.begin(), n.end());
    Reply r = raw.command(c);
    std::vector<std::string> keys;
    for (const Reply& k : r.elements) keys.push_back(k.str);
    EXPECT_EQ(keys, call.keys) << n[0] << ": " << r.str;
  }
}

TEST_F(Module, AclKeyPatternsApplyToTheTransitionsKeys) {
  Connection admin = Connection::open(server.options());
  ASSERT_FALSE(admin.command({"ACL", "SETUSER", "only-a", "on", ">pw", "~emq:{a}:*", "~{emq}:*", "+@all"}).is_error());
  x.ensure_connected();  // sets {emq}:version
  ConnectionOptions o = server.options();
  o.username = "only-a";
  o.password = "pw";
  Connection limited = Connection::open(o);
  Reply ok = limited.command(native_command(enqueue_call(QueueKeys("a"), "JOB_1", "p")));
  EXPECT_EQ(ok.integer, 1) << ok.str;
  Reply refused = limited.command(native_command(enqueue_call(QueueKeys("b"), "JOB_1", "p")));
  ASSERT_TRUE(refused.is_error());
  EXPECT_EQ(refused.str.rfind("NOPERM", 0), 0u) << refused.str;
}

TEST_F(Module, EveryLayoutErrorIsRefusedBeforeAnyWrite) {
  const Lease held = seed();
  const QueueKeys other("other");
  for (const ScriptCall& call : core_calls(q, held, mint_job_id())) {
    const Command good = native_command(call);
    SCOPED_TRACE(good[0]);
    // numkeys: one too few (of the transition's own KEYS: the group block
    // and the uniq root after them are optional), one too many, not a
    // number; and a group block cut short.
    const bool block = std::find(call.keys.begin(), call.keys.end(), q.gq_root) != call.keys.end();
    const std::size_t own = call.keys.size() - (call.keys.back() == q.uniq_root ? 1 : 0) - (block ? 7 : 0);
    if (block) {
      Command cut = good;
      cut.erase(cut.begin() + 2 + static_cast<std::ptrdiff_t>(own) + 6);  // gwait
      cut[1] = std::to_string(call.keys.size() - 1);
      expect_refused(cut, "EMQLAYOUT");
    }
    Command c = good;
    c[1] = std::to_string(own - 1);
    expect_refused(c, "EMQLAYOUT");
    c[1] = std::to_string(call.keys.size() + 1);
    expect_refused(c, "EMQLAYOUT");
    c[1] = "two";
    expect_refused(c, "EMQLAYOUT");
    for (std::size_t k = 0; k < call.keys.size(); ++k) {
      // Each position with a key of another type (the next position's), of
      // another queue, and one not in the emq:{q}: shape at all.
      const std::size_t at = 2 + k;
      c = good;
      c[at] = call.keys[(k + 1) % call.keys.size()];
      expect_refused(c, "EMQLAYOUT");
      c = good;
      c[at] = "emq:{other}:" + call.keys[k].substr(call.keys[k].find("}:") + 2);
      expect_refused(c, "EMQLAYOUT");
      c = good;
      c[at] = "pending";
      expect_refused(c, "EMQLAYOUT");
    }
    // A row key that is not the row of ARGV[1]; a row root with more after it.
    c = good;
    if (call.keys[0].rfind(q.row_root, 0) == 0 && call.keys[0] != q.row_root) {
      c[2] = q.row("JOB_someone-else");
      expect_refused(c, "EMQLAYOUT");
    }
    for (std::size_t k = 0; k < call.keys.size(); ++k) {
      if (call.keys[k] != q.row_root && call.keys[k] != q.deps_root && call.keys[k] != q.results_root &&
          call.keys[k] != q.uniq_root) {
        continue;
      }
      c = good;
      c[2 + k] = call.keys[k] + "x";
      expect_refused(c, "EMQLAYOUT");
    }
  }
}

TEST_F(Module, AMissingOrForeignWireIdentityIsRefusedBeforeAnyWrite) {
  const Lease held = seed();
  Connection raw = Connection::open(server.options());
  for (const char* held_wire : {"", "emq/2"}) {
    if (*held_wire == '\0')
      raw.command({"DEL", std::string(kVersionKey)});
    else
      raw.command({"SET", std::string(kVersionKey), held_wire});
    for (const ScriptCall& call : core_calls(q, held, mint_job_id())) expect_refused(native_command(call), "EMQWIRE");
  }
}

// WATCH (and client caching) sees a transition's writes exactly where the
// script's commands write: a lost lease signals nothing, though the module
// opens the row for writing, and each transition signals the keys it
// changes and no other, the same on both executors.
TEST_F(Module, WatchSeesExactlyTheKeysATransitionWrites) {
  for (ExecutorChoice choice : {ExecutorChoice::Scripted, ExecutorChoice::Native}) {
    SCOPED_TRACE(choice == ExecutorChoice::Native ? "native" : "scripted");
    Executor e(choosing(server, choice));
    const QueueKeys w(choice == ExecutorChoice::Native ? "watch-native" : "watch-scripted");
    const std::string id = mint_job_id();
    const std::vector<std::string> all{w.row(id), w.pending, w.active, w.delayed, w.dead, w.stats};
    auto only = [](std::initializer_list<std::string> keys) { return std::vector<std::string>(keys); };

    Lease held;
    auto enqueue_it = [&] { enqueue(e, w, id, "p"); };
    auto claim_it = [&] {
      std::vector<ClaimedJob> jobs = claim(e, w, {60000, 1, 0});
      ASSERT_EQ(jobs.size(), 1u);
      held = {jobs[0].id, jobs[0].lease_epoch};
    };
    auto settle_a_lost_lease = [&] {
      const Lease stale{held.id, held.epoch + 1};
      EXPECT_EQ(complete(e, w, stale, 0, ""), CompleteResult::LeaseLost);
      EXPECT_EQ(fail(e, w, stale, {"boom", 5, 0, false}), FailResult::LeaseLost);
      EXPECT_EQ(release(e, w, stale), ReleaseResult::LeaseLost);
      EXPECT_EQ(extend(e, w, 60000, {stale}), std::vector<bool>{false});
    };
    auto extend_it = [&] { EXPECT_EQ(extend(e, w, 60000, {held}), std::vector<bool>{true}); };
    auto complete_it = [&] { EXPECT_EQ(complete(e, w, held, 60000, "r"), CompleteResult::Completed); };
    EXPECT_EQ(signalled(server, all, enqueue_it), only({w.row(id), w.pending}));
    EXPECT_EQ(signalled(server, all, claim_it), only({w.row(id), w.pending, w.active, w.stats}));
    EXPECT_EQ(signalled(server, all, settle_a_lost_lease), only({}));
    EXPECT_EQ(signalled(server, all, extend_it), only({w.active}));
    EXPECT_EQ(signalled(server, all, complete_it), only({w.row(id), w.active, w.stats}));

    // A retry at once and a release, on a second job.
    const std::string second = mint_job_id();
    const std::vector<std::string> all2{w.row(second), w.pending, w.active, w.delayed, w.dead, w.stats};
    enqueue(e, w, second, "p");
    claim_it();
    auto fail_it = [&] { EXPECT_EQ(fail(e, w, held, {"boom", 5, 0, false}), FailResult::Retry); };
    EXPECT_EQ(signalled(server, all2, fail_it), only({w.row(second), w.pending, w.active, w.stats}));
    claim_it();
    auto release_it = [&] { EXPECT_EQ(release(e, w, held), ReleaseResult::Released); };
    EXPECT_EQ(signalled(server, all2, release_it), only({w.row(second), w.pending, w.active, w.stats}));
  }
}

TEST(ModuleLoad, ACLusterEnabledServerRefusesItWithALogLine) {
  char tmpl[] = "/tmp/emq-cluster-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  // A cluster node also binds port + 10000 for its bus: keep that a port.
  int port = free_loopback_port();
  while (port > 55000) port = free_loopback_port();
  const std::string cmd = "timeout 30 valkey-server --port " + std::to_string(port) +
                          " --bind 127.0.0.1 --save '' --cluster-enabled yes --cluster-config-file " + dir +
                          "/nodes.conf --dir " + dir + " --logfile " + dir + "/valkey.log --loadmodule " +
                          emq_module_path();
  const int status = std::system(cmd.c_str());
  std::ifstream log(dir + "/valkey.log");
  std::stringstream text;
  text << log.rdbuf();
  std::system(("rm -rf " + dir).c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 124)
      << "the server should have stopped at load, status " << status;
  EXPECT_NE(text.str().find("emq: refusing to load on a cluster-enabled server"), std::string::npos) << text.str();
}

TEST(ExecutorChoiceTest, AutoIsNativeWhenTheModuleIsLoadedAndScriptedWhenNot) {
  ValkeyServer with(with_module()), without;
  Executor a(choosing(with, ExecutorChoice::Auto)), b(choosing(without, ExecutorChoice::Auto));
  a.ensure_connected();
  b.ensure_connected();
  EXPECT_TRUE(a.native());
  EXPECT_FALSE(b.native());
  for (Executor* x : {&a, &b}) {
    QueueKeys q("auto");
    const std::string id = mint_job_id();
    EXPECT_EQ(enqueue(*x, q, id, "p"), EnqueueResult::Enqueued);
    std::vector<ClaimedJob> jobs = claim(*x, q, {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(complete(*x, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  }
  const std::string stats = with.cli({"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_emq.claim:calls=1"), std::string::npos) << stats;
}

TEST(ExecutorChoiceTest, NativeAgainstAServerWithoutTheModuleSaysHowToLoadIt) {
  ValkeyServer without;
  Executor x(choosing(without, ExecutorChoice::Native));
  try {
    x.ensure_connected();
    FAIL() << "connected natively to a server without the module";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("loadmodule"), std::string::npos) << e.what();
  }
}

TEST(ExecutorChoiceTest, ScriptedNeverSendsEmqCommandsAndNativeKeepsScriptsForLanes) {
  ValkeyServer with(with_module());
  Executor scripted(choosing(with, ExecutorChoice::Scripted)), native(choosing(with, ExecutorChoice::Native));
  QueueKeys q("choice");
  enqueue(scripted, q, mint_job_id(), "p");
  std::string stats = with.cli({"INFO", "commandstats"});
  EXPECT_EQ(stats.find("cmdstat_emq."), std::string::npos) << stats;
  enqueue(native, q, mint_job_id(), "p");
  enqueue(native, q, mint_job_id(), "p", {3, std::nullopt});
  stats = with.cli({"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_emq.enqueue:calls=1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_evalsha:calls=2"), std::string::npos) << "a lane stays a script: " << stats;
}

// Row keys the module builds from the row root are not in the command's
// key specs, so the server never checks them: the module checks them
// against the caller's ACL itself, as the server checks every key a script
// touches. A user allowed only the declared keys reads no row through
// either path.
TEST_F(Module, RowKeysBuiltFromTheRootAreCheckedAgainstTheCallersAcl) {
  const Lease held = seed();
  enqueue(x, q, mint_job_id(), "p", {0, 1});  // a due delayed job, for the promotion
  Connection admin = Connection::open(server.options());
  Command declared_only{"ACL", "SETUSER", "declared", "on", ">pw", "+@all"};
  for (const std::string& k : {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root, q.uniq_root, q.gq_root,
                               q.grp_root, q.gact_root, q.gidx, q.rot, q.groups, q.gwait}) {
    declared_only.push_back("~" + k);
  }
  ASSERT_EQ(admin.command(declared_only).str, "OK");
  Connection user = Connection::open(server.options());
  ASSERT_EQ(user.command({"AUTH", "declared", "pw"}).str, "OK");
  ASSERT_EQ(user.command({"HGETALL", q.row(held.id)}).str.rfind("NOPERM", 0), 0u) << "the ACL should refuse rows";

  const Keyspace before = dump_keyspace(admin);
  Reply claimed = user.command(native_command(claim_call(q, {30000, 5, 5})));
  EXPECT_EQ(claimed.str, acl_refusal("EMQ.CLAIM"));
  Reply extended = user.command(native_command(extend_call(q, 60000, {held})));
  EXPECT_EQ(extended.str, acl_refusal("EMQ.EXTEND"));
  std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(admin), 0);
  EXPECT_TRUE(diff.empty()) << "a refused call wrote: " << (diff.empty() ? "" : diff.front());

  // ACL LOG names the row, as it does for a script.
  std::map<std::string, std::string> entry = newest_acl_log_entry(admin);
  EXPECT_EQ(entry["reason"], "key");
  EXPECT_EQ(entry["object"], q.row(held.id));

  // The script path refuses the same user the same rows.
  EXPECT_TRUE(refused_in_script(user.command(eval_command(claim_call(q, {30000, 5, 5})))));

  // Allowed the rows too, and the dead set beside them (where claim sends
  // a row whose counter cannot count), the same user claims.
  ASSERT_EQ(admin.command({"ACL", "SETUSER", "declared", "~" + q.row_root + "*", "~" + q.dead}).str, "OK");
  Reply ok = user.command(native_command(claim_call(q, {30000, 5, 5})));
  EXPECT_EQ(ok.type, Reply::Type::Array) << ok.str;
}

// A group's own keys (gq:<g>, grp:<g>, gact:<g>) are built from the
// block's roots, so the server checks the roots, never them: the module
// checks them against the caller's ACL before it touches them, as the
// server refuses the script the same keys. A user allowed every declared
// key and the rows, but not a group's keys, moves no job of that group
// through either path, and loses none.
TEST_F(Module, GroupKeysBuiltFromTheRootsAreCheckedAgainstTheCallersAcl) {
  EnqueueOptions o;
  o.group = "acme";
  ASSERT_EQ(enqueue(x, q, mint_job_id(), "first", o), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  const Lease held{jobs[0].id, jobs[0].lease_epoch};
  const std::string waiting = mint_job_id();
  ASSERT_EQ(enqueue(x, q, waiting, "second", o), EnqueueResult::Enqueued);

  Connection admin = Connection::open(server.options());
  Command grouped{"ACL", "SETUSER", "grouped", "on", ">pw", "+@all", "~" + q.row_root + "*", "~" + q.dead};
  for (const std::string& k :
       {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root, q.uniq_root, q.outbox, q.deps_root, q.results_root,
        q.gq_root, q.grp_root, q.gact_root, q.gidx, q.rot, q.groups, q.gwait}) {
    grouped.push_back("~" + k);
  }
  ASSERT_EQ(admin.command(grouped).str, "OK");
  Connection user = Connection::open(server.options());
  ASSERT_EQ(user.command({"AUTH", "grouped", "pw"}).str, "OK");
  ASSERT_EQ(user.command({"ZCARD", q.gq("acme")}).str.rfind("NOPERM", 0), 0u) << "the ACL should refuse gq:acme";

  // Each path's refusal, with nothing written: a claim meets the group at
  // the rotation's head, an end meets the held job's group.
  const std::vector<std::pair<ScriptCall, std::string>> calls = {
      {claim_call(q, {30000, 5, 0}), "EMQ.CLAIM"},
      {complete_call(q, held, 0, "done"), "EMQ.COMPLETE"},
      {fail_call(q, held, {"boom", 5, 1000, false}), "EMQ.FAIL"},
      {release_call(q, held), "EMQ.RELEASE"},
      {complete_call(q, held, 0, "done", FlowMode::Flow), "EMQ.COMPLETE_FLOW"},
      {fail_call(q, held, {"boom", 5, 1000, false}, FlowMode::Flow), "EMQ.FAIL_FLOW"}};
  for (const auto& [call, name] : calls) {
    const Keyspace before = dump_keyspace(admin);
    EXPECT_EQ(user.command(native_command(call)).str, acl_refusal(name));
    std::map<std::string, std::string> entry = newest_acl_log_entry(admin);
    EXPECT_EQ(entry["object"], q.gq("acme")) << name << ": ACL LOG names the group's key, as for a script";
    EXPECT_TRUE(refused_in_script(user.command(eval_command(call))))
        << name << ": the server refuses the script the same key";
    std::vector<std::string> diff = keyspace_diff(before, dump_keyspace(admin), 0);
    EXPECT_TRUE(diff.empty()) << name << ": a refused call wrote: " << (diff.empty() ? "" : diff.front());
  }

  // Allowed the group's keys, the same user ends the held job and claims
  // the one waiting in the group.
  ASSERT_EQ(admin
                .command({"ACL", "SETUSER", "grouped", "~" + q.gq_root + "*", "~" + q.grp_root + "*",
                          "~" + q.gact_root + "*"})
                .str,
            "OK");
  EXPECT_EQ(user.command(native_command(complete_call(q, held, 0, "done"))).integer, 1);
  Reply claimed = user.command(native_command(claim_call(q, {30000, 5, 0})));
  ASSERT_EQ(claimed.type, Reply::Type::Array) << claimed.str;
  ASSERT_EQ(claimed.elements.size(), 4u);
  EXPECT_EQ(claimed.elements[0].str, waiting);
}

// A claim's walk the caller's ACL stops at a group's key keeps what it
// wrote before the refusal, on both executors alike: the group served
// first has its job leased and its count down, and gidx's * (which a
// walk moves once, at its end) is down by that job too.
TEST_F(Module, AWalkTheAclStopsPartWayStillTakesWhatItPoppedOffTheSum) {
  Connection admin = Connection::open(server.options());
  Command walker{"ACL", "SETUSER", "walker", "on", ">pw", "+@all"};
  for (const char* name : {"walk-native", "walk-script"}) {
    QueueKeys k(name);
    EnqueueOptions open, shut;
    open.group = "open";
    shut.group = "shut";
    ASSERT_EQ(enqueue(x, k, mint_job_id(), "first", open), EnqueueResult::Enqueued);
    ASSERT_EQ(enqueue(x, k, mint_job_id(), "second", shut), EnqueueResult::Enqueued);
    for (const std::string& key :
         {k.pending, k.active, k.delayed, k.meta, k.stats, k.row_root + "*", k.dead, k.uniq_root, k.gq_root, k.grp_root,
          k.gact_root, k.gidx, k.rot, k.groups, k.gwait, k.gq("open"), k.grp("open"), k.gact("open")}) {
      walker.push_back("~" + key);
    }
  }
  Connection user = user_from(admin, walker);

  const QueueKeys native("walk-native"), script("walk-script");
  EXPECT_EQ(user.command(native_command(claim_call(native, {30000, 5, 0}))).str, acl_refusal("EMQ.CLAIM"));
  EXPECT_TRUE(refused_in_script(user.command(eval_command(claim_call(script, {30000, 5, 0})))));
  for (const QueueKeys& k : {native, script}) {
    EXPECT_EQ(admin.command({"ZCARD", k.active}).integer, 1) << k.active << ": open's job is leased";
    EXPECT_EQ(admin.command({"ZSCORE", k.gidx, "open"}).str, "0") << k.gidx;
    EXPECT_EQ(admin.command({"ZSCORE", k.gidx, "shut"}).str, "1") << k.gidx;
    EXPECT_EQ(admin.command({"ZSCORE", k.gidx, "*"}).str, "1") << k.gidx << ": * is the one job pending";
    Reply rot = admin.command({"LRANGE", k.rot, "0", "-1"});
    ASSERT_EQ(rot.elements.size(), 1u) << k.rot;
    EXPECT_EQ(rot.elements[0].str, "shut") << k.rot;
  }
}

// A row in pending that names a group its caller may not touch (an emq/1
// peer put it there, or a hand-written field) stops a claim at that job on
// both executors: the script's group_of is refused after the job's lease
// is written, before its entry; the jobs popped with it are not leased.
TEST_F(Module, AClaimStopsAtARowWhoseGroupTheAclRefusesOnBothExecutors) {
  Connection admin = Connection::open(server.options());
  Command claimer{"ACL", "SETUSER", "claimer", "on", ">pw", "+@all"};
  std::map<std::string, std::pair<std::string, std::string>> ids;
  for (const char* name : {"stop-native", "stop-script"}) {
    QueueKeys k(name);
    const std::string first = mint_job_id(), second = mint_job_id();
    ASSERT_EQ(enqueue(x, k, first, "first"), EnqueueResult::Enqueued);
    ASSERT_EQ(enqueue(x, k, second, "second"), EnqueueResult::Enqueued);
    ASSERT_EQ(admin.command({"HSET", k.row(first), "group", "shut"}).integer, 1);
    ids[name] = {first, second};
    for (const std::string& key :
         {k.pending, k.active, k.delayed, k.meta, k.stats, k.row_root + "*", k.dead, k.uniq_root, k.gq_root, k.grp_root,
          k.gact_root, k.gidx, k.rot, k.groups, k.gwait, k.events}) {
      claimer.push_back("~" + key);
    }
  }
  Connection user = user_from(admin, claimer);

  const QueueKeys native("stop-native"), script("stop-script");
  EXPECT_EQ(user.command(native_command(claim_call(native, {30000, 5, 0}))).str, acl_refusal("EMQ.CLAIM"));
  EXPECT_TRUE(refused_in_script(user.command(eval_command(claim_call(script, {30000, 5, 0})))));
  for (const QueueKeys& k : {native, script}) {
    const auto& [first, second] = ids[k.queue];
    EXPECT_EQ(admin.command({"ZCARD", k.active}).integer, 1) << k.queue;
    EXPECT_EQ(admin.command({"HGET", k.row(first), "state"}).str, "active") << k.queue;
    EXPECT_EQ(admin.command({"HGET", k.row(second), "state"}).str, "pending") << k.queue << ": popped, not leased";
    EXPECT_EQ(admin.command({"ZCARD", k.pending}).integer, 0) << k.queue;
    EXPECT_EQ(admin.command({"HGET", k.stats, "claimed"}).type, Reply::Type::Nil) << k.queue;
  }
}

// A group's count check reads the rows of ids whose recorded deadline has
// passed; rows are built from the root, so the server never checks them.
// A caller allowed its own job's row but not another counted job's ends
// its job on neither executor: the script's TYPE of that row is refused,
// the module checks the row and refuses it too, and both keep what they
// wrote before the check and nothing after it.
TEST_F(Module, ACountCheckOfARowTheAclRefusesStopsBothExecutorsAlike) {
  Connection admin = Connection::open(server.options());
  Command ender{"ACL", "SETUSER", "ender", "on", ">pw", "+@all"};
  std::map<std::string, Lease> mine;
  std::map<std::string, std::string> other;
  for (const char* name : {"count-native", "count-script"}) {
    QueueKeys k(name);
    EnqueueOptions o;
    o.group = "acme";
    for (int i = 0; i < 2; ++i) ASSERT_EQ(enqueue(x, k, mint_job_id(), "job", o), EnqueueResult::Enqueued);
    const std::vector<ClaimedJob> kept = claim(x, k, {600000, 1, 0});
    const std::vector<ClaimedJob> lapsing = claim(x, k, {1, 1, 0});
    ASSERT_EQ(kept.size(), 1u);
    ASSERT_EQ(lapsing.size(), 1u);
    mine[name] = {kept[0].id, kept[0].lease_epoch};
    other[name] = lapsing[0].id;
    for (const std::string& key :
         {k.row(kept[0].id), k.active, k.stats, k.dead, k.uniq_root, k.gq_root, k.grp_root, k.gact_root, k.gidx, k.rot,
          k.groups, k.gwait, k.gq("acme"), k.grp("acme"), k.gact("acme")}) {
      ender.push_back("~" + key);
    }
    // The lapsing job's recorded deadline is past: the check will read it.
    ASSERT_TRUE(wait_for(
        [&] {
          const std::string at = admin.command({"ZSCORE", k.gact("acme"), lapsing[0].id}).str;
          return !at.empty() && std::stoll(admin.command({"TIME"}).elements[0].str) * 1000 > std::stoll(at);
        },
        std::chrono::seconds(5)));
  }
  Connection user = user_from(admin, ender);

  const QueueKeys native("count-native"), script("count-script");
  EXPECT_EQ(user.command(native_command(complete_call(native, mine["count-native"], 0, "done"))).str,
            acl_refusal("EMQ.COMPLETE"));
  EXPECT_EQ(newest_acl_log_entry(admin)["object"], native.row(other["count-native"]));
  EXPECT_TRUE(refused_in_script(user.command(eval_command(complete_call(script, mine["count-script"], 0, "done")))));
  EXPECT_EQ(newest_acl_log_entry(admin)["object"], script.row(other["count-script"]));
  for (const QueueKeys& k : {native, script}) {
    const std::string& own = mine[k.queue].id;
    const std::string& lapsed = other[k.queue];
    EXPECT_EQ(admin.command({"EXISTS", k.row(own)}).integer, 0) << k.queue << ": written before the check";
    EXPECT_EQ(admin.command({"ZSCORE", k.active, own}).type, Reply::Type::Nil) << k.queue;
    Reply counted = admin.command({"ZRANGE", k.gact("acme"), "0", "-1"});
    ASSERT_EQ(counted.elements.size(), 1u) << k.queue;
    EXPECT_EQ(counted.elements[0].str, lapsed) << k.queue << ": the refused check changed nothing";
    EXPECT_EQ(admin.command({"HGET", k.stats, "completed"}).type, Reply::Type::Nil)
        << k.queue << ": nothing after the check";
  }
}

// A unique key's lock is built from the uniq root: the server checks the
// root, never the lock. A caller whose ACL refuses the lock completes its
// job on either executor alike: the script's pcall skips the release, the
// module checks the lock and skips it too, each logging the key. The lock
// is left as a stale pointer, which blocks no enqueue.
TEST_F(Module, AReleaseTheCallersAclRefusesLeavesAStalePointerOnBothExecutors) {
  Connection admin = Connection::open(server.options());
  Command declared_only{"ACL", "SETUSER", "declared", "on", ">pw", "+@all", "~" + q.row_root + "*"};
  for (const std::string& k : {q.pending, q.active, q.delayed, q.meta, q.stats, q.uniq_root, q.gq_root, q.grp_root,
                               q.gact_root, q.gidx, q.rot, q.groups, q.gwait}) {
    declared_only.push_back("~" + k);
  }
  ASSERT_EQ(admin.command(declared_only).str, "OK");
  Connection user = Connection::open(server.options());
  ASSERT_EQ(user.command({"AUTH", "declared", "pw"}).str, "OK");

  for (bool native : {true, false}) {
    SCOPED_TRACE(native ? "EMQ.COMPLETE" : "the script");
    EnqueueOptions o;
    o.job.unique = UniqueKey{"locked", std::nullopt, 0};
    const std::string id = mint_job_id();
    ASSERT_EQ(enqueue(x, q, id, "p", o), EnqueueResult::Enqueued);
    const std::vector<ClaimedJob> jobs = claim(x, q, {60000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    const ScriptCall call = complete_call(q, {id, jobs[0].lease_epoch}, 0, "r");
    const Reply r = user.command(native ? native_command(call) : eval_command(call));
    EXPECT_EQ(r.type, Reply::Type::Integer) << r.str;
    EXPECT_EQ(r.integer, 1);
    EXPECT_EQ(admin.command({"EXISTS", q.row(id)}).integer, 0) << "the job completed";
    EXPECT_EQ(admin.command({"GET", q.uniq("locked")}).str, id) << "the lock is left, a stale pointer";
    EXPECT_EQ(newest_acl_log_entry(admin)["object"], q.uniq("locked"));
    EXPECT_EQ(enqueue(x, q, mint_job_id(), "p", o), EnqueueResult::Enqueued) << "and blocks nothing";
    ASSERT_EQ(admin.command({"DEL", q.uniq("locked")}).integer, 1);
    ASSERT_EQ(admin.command({"DEL", q.pending}).integer, 1);
  }
}

}  // namespace
}  // namespace echomq::test
