// The wire's two error codes. EMQKIND: an id that is not JOB-namespaced,
// refused by the scripts themselves (raw calls) and host-side by the typed
// API. EMQARG: a malformed argument, refused before anything is written.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class WireErrors : public WireTest {
 protected:
  const std::string bad_ = "TASK_1";  // not JOB-namespaced
  std::string bad_row() const { return q.row_root + bad_; }

  void expect_refused(const ScriptCall& call, ErrorKind kind, const std::string& fragment) {
    WireError e = eval_error(call);
    EXPECT_EQ(e.kind, kind) << script_info(call.script).name << ": " << e.message;
    EXPECT_NE(e.message.find(fragment), std::string::npos)
        << script_info(call.script).name << ": '" << e.message << "' does not say '" << fragment << "'";
  }
};

TEST_F(WireErrors, EveryTransitionTakingAnIdRefusesANonJobIdOnTheWire) {
  const std::vector<ScriptCall> calls{
      {Script::Enqueue, {bad_row(), q.pending}, {bad_, "p"}},
      {Script::EnqueueLane, {bad_row(), q.pending}, {bad_, "p", "1"}},
      {Script::EnqueueAt, {bad_row(), q.delayed}, {bad_, "p", "1", "0"}},
      {Script::Extend, {q.active, q.row_root}, {"1000", bad_, "1"}},
      {Script::Extend, {q.active, q.row_root}, {"1000", "JOB_ok", "1", bad_, "1"}},
      {Script::Complete, {bad_row(), q.active, q.stats}, {bad_, "1", "0", ""}},
      {Script::Fail, {bad_row(), q.active, q.delayed, q.pending, q.dead, q.stats}, {bad_, "1", "e", "5", "0", "0"}},
      {Script::Release, {bad_row(), q.active, q.pending, q.stats}, {bad_, "1"}},
      {Script::Cancel, {bad_row(), q.pending, q.delayed, q.dead}, {bad_}},
      {Script::RetryJob, {bad_row(), q.dead, q.pending}, {bad_}},
  };
  // A row under the bad id exists, so a script that forgot the gate would
  // have something to act on.
  cmd({"HSET", bad_row(), "state", "active", "attempts", "1", "payload", "p", "lease_epoch", "1"});
  cmd({"ZADD", q.active, "99999999999999", bad_});
  cmd({"ZADD", q.dead, "1", bad_});  // for retry_job, which acts on dead ids only
  auto before = snapshot();
  for (const ScriptCall& call : calls) expect_refused(call, ErrorKind::Kind, "EMQKIND job id must be JOB-namespaced");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(WireErrors, TheTypedApiRefusesANonJobIdBeforeTheServerSeesIt) {
  auto expect_kind = [&](const char* what, auto&& f) {
    try {
      f();
      ADD_FAILURE() << what << " accepted " << bad_;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Kind) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("EMQKIND"), std::string::npos) << e.what();
    }
  };
  const Lease lease{bad_, 1};
  expect_kind("enqueue", [&] { enqueue(x, q, bad_, "p"); });
  expect_kind("enqueue lane", [&] { enqueue(x, q, bad_, "p", {2, std::nullopt}); });
  expect_kind("enqueue at", [&] { enqueue(x, q, bad_, "p", {0, 1}); });
  expect_kind("extend", [&] { extend(x, q, 1000, {lease}); });
  expect_kind("complete", [&] { complete(x, q, lease, 0, ""); });
  expect_kind("fail", [&] { fail(x, q, lease, {"e", 5, 0, false}); });
  expect_kind("release", [&] { release(x, q, lease); });
  expect_kind("cancel", [&] { cancel(x, q, bad_); });
  expect_kind("retry_job", [&] { retry_job(x, q, bad_); });
  expect_kind("inspect", [&] { inspect(x, q, bad_); });
  EXPECT_TRUE(snapshot().empty());
}

struct BadArg {
  Script script;
  std::vector<std::string> args;  // {} keys are filled in per script
  const char* says;
};

TEST_F(WireErrors, MalformedArgumentsAreRefusedWithEmqargAndWriteNothing) {
  // Something in every state an argument mistake could damage.
  Lease active = make_active("active");
  make_dead("dead");
  std::string pending = enqueue_new("pending");
  enqueue_new("due", {0, now_ms() - 1});
  const std::string a = active.id, e = std::to_string(active.epoch);
  const std::string huge(400, '9');

  const std::vector<BadArg> cases{
      {Script::EnqueueLane, {"JOB_n", "p", "1001"}, "lane must be an integer in -1000..1000"},
      {Script::EnqueueLane, {"JOB_n", "p", "-1001"}, "lane must be an integer in -1000..1000"},
      {Script::EnqueueLane, {"JOB_n", "p", "high"}, "lane must be an integer in -1000..1000"},
      {Script::EnqueueLane, {"JOB_n", "p", "1.5"}, "lane must be an integer in -1000..1000"},
      {Script::EnqueueLane, {"JOB_n", "p", ""}, "lane must be an integer in -1000..1000"},
      {Script::EnqueueAt, {"JOB_n", "p", "-1", "0"}, "due_ms must be an integer in 0..1000000000000000"},
      {Script::EnqueueAt, {"JOB_n", "p", "soon", "0"}, "due_ms must be an integer in 0..1000000000000000"},
      {Script::EnqueueAt, {"JOB_n", "p", "1", "2000"}, "lane must be an integer in -1000..1000"},
      {Script::Claim, {"0", "1", "1"}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Claim, {"-5", "1", "1"}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Claim, {"30s", "1", "1"}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Claim, {"1000", "0", "1"}, "max_count must be an integer in 1..1000000"},
      {Script::Claim, {"1000", "all", "1"}, "max_count must be an integer in 1..1000000"},
      {Script::Claim, {"1000", "1", "-1"}, "promote_limit must be an integer in 0..1000000"},
      {Script::Claim, {"1000", "1", "1.5"}, "promote_limit must be an integer in 0..1000000"},
      {Script::Extend, {"0", a, e}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Extend, {"-1", a, e}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Extend, {"1000", a}, "extend takes lease_ms then id, epoch pairs"},
      {Script::Extend, {"1000", a, e, a}, "extend takes lease_ms then id, epoch pairs"},
      {Script::Complete, {a, e, "-1", "r"}, "keep_ms must be an integer in 0..1000000000000"},
      {Script::Complete, {a, e, "1h", "r"}, "keep_ms must be an integer in 0..1000000000000"},
      {Script::Fail, {a, e, "err", "0", "0", "0"}, "max_attempts must be an integer in 1..1000000"},
      {Script::Fail, {a, e, "err", "five", "0", "0"}, "max_attempts must be an integer in 1..1000000"},
      {Script::Fail, {a, e, "err", "5", "-1", "0"}, "backoff_ms must be an integer in 0..1000000000000"},
      {Script::Fail, {a, e, "err", "5", "0", "2"}, "permanent must be 0 or 1"},
      {Script::Fail, {a, e, "err", "5", "0", "true"}, "permanent must be 0 or 1"},
      {Script::Fail, {a, e, "err", "5", "0", ""}, "permanent must be 0 or 1"},
      {Script::Reap, {"0", "10"}, "max_attempts must be an integer in 1..1000000"},
      {Script::Reap, {"5", "0"}, "limit must be an integer in 1..1000000"},
      {Script::Reap, {"5", "-1"}, "limit must be an integer in 1..1000000"},
      {Script::RetryDead, {"0"}, "limit must be an integer in 1..1000000"},
      {Script::RetryDead, {"many"}, "limit must be an integer in 1..1000000"},
      {Script::TrimDead, {"-1", "0"}, "older_than_ms must be an integer in 0..1000000000000"},
      {Script::TrimDead, {"0", "-1"}, "max_keep must be an integer in 0..1000000000"},
      {Script::TrimDead, {"1d", "0"}, "older_than_ms must be an integer in 0..1000000000000"},
      // Beyond what the wire can mean: a 400-digit number is an integer to
      // the pattern, and would be an inf score (a lease that never ends).
      {Script::EnqueueAt, {"JOB_n", "p", huge, "0"}, "due_ms must be an integer in 0..1000000000000000"},
      {Script::EnqueueAt, {"JOB_n", "p", "1000000000000001", "0"}, "due_ms must be an integer in 0..1000000000000000"},
      {Script::Claim, {huge, "1", "1"}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Claim, {"1000000000001", "1", "1"}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Claim, {"1000", huge, "1"}, "max_count must be an integer in 1..1000000"},
      {Script::Claim, {"1000", "1000001", "1"}, "max_count must be an integer in 1..1000000"},
      {Script::Claim, {"1000", "1", "1000001"}, "promote_limit must be an integer in 0..1000000"},
      {Script::Extend, {huge, a, e}, "lease_ms must be an integer in 1..1000000000000"},
      {Script::Complete, {a, e, huge, "r"}, "keep_ms must be an integer in 0..1000000000000"},
      {Script::Complete, {a, e, "1000000000001", "r"}, "keep_ms must be an integer in 0..1000000000000"},
      {Script::Fail, {a, e, "err", "5", huge, "0"}, "backoff_ms must be an integer in 0..1000000000000"},
      {Script::Fail, {a, e, "err", "1000001", "0", "0"}, "max_attempts must be an integer in 1..1000000"},
      {Script::Reap, {huge, "10"}, "max_attempts must be an integer in 1..1000000"},
      {Script::Reap, {"5", "1000001"}, "limit must be an integer in 1..1000000"},
      {Script::RetryDead, {huge}, "limit must be an integer in 1..1000000"},
      {Script::TrimDead, {huge, "0"}, "older_than_ms must be an integer in 0..1000000000000"},
      {Script::TrimDead, {"0", "1000000001"}, "max_keep must be an integer in 0..1000000000"},
  };
  auto keys_for = [&](Script s) -> std::vector<std::string> {
    switch (s) {
      case Script::EnqueueLane: return {q.row("JOB_n"), q.pending};
      case Script::EnqueueAt: return {q.row("JOB_n"), q.delayed};
      case Script::Claim: return {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root};
      case Script::Extend: return {q.active, q.row_root};
      case Script::Complete: return {q.row(a), q.active, q.stats};
      case Script::Fail: return {q.row(a), q.active, q.delayed, q.pending, q.dead, q.stats};
      case Script::Reap: return {q.active, q.pending, q.dead, q.stats, q.row_root};
      case Script::RetryDead: return {q.dead, q.pending, q.row_root};
      case Script::TrimDead: return {q.dead, q.row_root};
      default: return {};
    }
  };

  auto before = snapshot();
  for (const BadArg& c : cases) {
    expect_refused({c.script, keys_for(c.script), c.args}, ErrorKind::Arg, std::string("EMQARG ") + c.says);
  }
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(row(pending).at("state"), "pending");
}

TEST_F(WireErrors, TheTypedApiSurfacesEmqargAsErrorKindArg) {
  Lease l = make_active();
  auto expect_arg = [&](const char* what, auto&& f) {
    try {
      f();
      ADD_FAILURE() << what << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Arg) << what << ": " << e.what();
      EXPECT_FALSE(e.transient()) << "retrying a malformed call cannot help";
    }
  };
  auto before = snapshot();
  expect_arg("claim lease 0", [&] { claim(x, q, {0, 1, 0}); });
  expect_arg("extend lease 0", [&] { extend(x, q, 0, {l}); });
  expect_arg("complete keep -1", [&] { complete(x, q, l, -1, ""); });
  expect_arg("fail max_attempts 0", [&] { fail(x, q, l, {"e", 0, 0, false}); });
  expect_arg("fail backoff -1", [&] { fail(x, q, l, {"e", 5, -1, false}); });
  expect_arg("reap limit 0", [&] { reap(x, q, 5, 0); });
  expect_arg("retry_dead limit 0", [&] { retry_dead(x, q, 0); });
  expect_arg("trim_dead older_than -1", [&] { trim_dead(x, q, -1, 0); });
  EXPECT_EQ(snapshot(), before);
}

// A primary short of the replicas min-replicas-to-write asks for refuses
// writes with NOREPLICAS until one catches up: a wait, not a refusal.
TEST(WireRefusals, NoreplicasIsTransient) {
  ValkeyServer lonely({false, {"--min-replicas-to-write", "1"}});
  Executor on(lonely.options());
  QueueKeys k("noreplicas");
  try {
    enqueue(on, k, mint_job_id(), "p");
    FAIL() << "a primary with no replica took a write it was told to refuse";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NOREPLICAS"), std::string::npos) << e.what();
    EXPECT_EQ(e.kind(), ErrorKind::ReadOnly) << e.what();
    EXPECT_TRUE(e.transient()) << e.what();
  }
}

}  // namespace
}  // namespace echomq::test
