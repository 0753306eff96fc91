// The executor against the real server: script cache loss (NOSCRIPT) mended
// transparently, the wire identity {emq}:version, AUTH, and the unix socket.
#include "wire_fixture.h"

#include "echomq/url.h"

namespace echomq::test {
namespace {

class ExecutorWire : public WireTest {
 protected:
  // A connection of our own to a database of the shared server, for seeding
  // what no speaker would write.
  Connection raw_connection(int db) {
    ConnectionOptions o = server().options();
    o.db = db;
    return Connection::open(o);
  }
};

// Lanes stay scripts on either executor (the module has no enqueue_lane),
// so these two tests prove the reload on both.
const EnqueueOptions kLane1{1, std::nullopt};

TEST_F(ExecutorWire, NoscriptAfterScriptFlushIsReloadedForEval) {
  enqueue_new();
  ASSERT_EQ(x.script_loads(), kScriptCount) << "connecting loads every script once";
  cmd({"SCRIPT", "FLUSH"});

  std::string id = mint_job_id();
  EXPECT_EQ(enqueue(x, q, id, "after flush", kLane1), EnqueueResult::Enqueued);
  EXPECT_EQ(x.script_loads(), 2 * kScriptCount) << "one reload of the whole set";
  EXPECT_EQ(row(id).at("payload"), "after flush");
  EXPECT_EQ(claim(x, q, {30000, 10, 0}).size(), 2u);
  EXPECT_EQ(x.script_loads(), 2 * kScriptCount) << "no reload while the cache holds";
}

TEST_F(ExecutorWire, NoscriptAfterScriptFlushIsReloadedForEvalBatch) {
  enqueue_new();
  ASSERT_EQ(x.script_loads(), kScriptCount);
  cmd({"SCRIPT", "FLUSH"});

  std::vector<std::string> ids{mint_job_id(), mint_job_id(), mint_job_id()};
  std::vector<ScriptCall> calls;
  for (const std::string& id : ids) calls.push_back(enqueue_call(q, id, "batched", kLane1));
  std::vector<Reply> replies = x.eval_batch(calls);
  ASSERT_EQ(replies.size(), 3u);
  for (const Reply& r : replies) {
    EXPECT_EQ(r.type, Reply::Type::Integer) << r.str;
    EXPECT_EQ(r.integer, 1);
  }
  EXPECT_EQ(x.script_loads(), 2 * kScriptCount) << "one reload for the whole batch";
  for (const std::string& id : ids) EXPECT_EQ(row(id).at("state"), "pending");
}

TEST_F(ExecutorWire, ABatchReturnsEachErrorReplyInPlace) {
  std::string a = mint_job_id(), c = mint_job_id();
  std::vector<ScriptCall> calls{
      enqueue_call(q, a, "a"),
      {Script::Enqueue, {q.row_root + "TASK_1", q.pending}, {"TASK_1", "b"}},
      enqueue_call(q, c, "c"),
  };
  std::vector<Reply> replies = x.eval_batch(calls);
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].integer, 1);
  EXPECT_TRUE(replies[1].is_error());
  EXPECT_EQ(replies[1].str.rfind("EMQKIND", 0), 0u) << replies[1].str;
  EXPECT_THROW(decode_enqueue(replies[1]), Error);
  EXPECT_EQ(replies[2].integer, 1);
  EXPECT_EQ(members(q.pending), (std::vector<std::string>{a, c}));
}

TEST_F(ExecutorWire, ConnectingClaimsAnEmptyServerForEmq1) {
  Connection seed = raw_connection(8);
  ASSERT_TRUE(seed.command({"GET", "{emq}:version"}).is_nil());
  ConnectionOptions o = server().options();
  o.db = 8;
  Executor fresh(o);
  fresh.ensure_connected();
  EXPECT_EQ(seed.command({"GET", "{emq}:version"}).str, "emq/1");
}

TEST_F(ExecutorWire, AnotherWireVersionIsRefusedOnConnect) {
  Connection seed = raw_connection(7);
  seed.command({"SET", "{emq}:version", "emq/2"});
  ConnectionOptions o = server().options();
  o.db = 7;
  Executor other(o);
  try {
    other.ensure_connected();
    FAIL() << "connected to a server that speaks emq/2";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Wire);
    std::string m = e.what();
    EXPECT_NE(m.find("EMQWIRE"), std::string::npos) << m;
    EXPECT_NE(m.find("emq/2"), std::string::npos) << m;
    EXPECT_NE(m.find("emq/1"), std::string::npos) << m;
  }
  EXPECT_FALSE(other.connected());
  // Once the reconnect backoff has passed, a typed call refuses the same way.
  ASSERT_TRUE(wait_for([&] { return other.retry_after().count() == 0; }, std::chrono::seconds(5)));
  QueueKeys k("wire-mismatch");
  try {
    enqueue(other, k, mint_job_id(), "p");
    FAIL() << "enqueued on a server that speaks emq/2";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Wire) << e.what();
  }
  EXPECT_EQ(seed.command({"GET", "{emq}:version"}).str, "emq/2");
  EXPECT_EQ(seed.command({"DBSIZE"}).integer, 1);
  EXPECT_EQ(other.script_loads(), 0u) << "no script is loaded into a foreign wire";
}

// The refusal's kind survives the backoff window: a call made before the
// next attempt is due reports the same Wire refusal, not an unreachable
// server (the cause of a flaky AnotherWireVersionIsRefusedOnConnect).
TEST_F(ExecutorWire, InsideTheBackoffWindowTheRefusalKeepsItsKind) {
  Connection seed = raw_connection(6);
  seed.command({"SET", "{emq}:version", "emq/2"});
  ConnectionOptions o = server().options();
  o.db = 6;
  Executor other(o, {std::chrono::milliseconds(60000), std::chrono::milliseconds(60000)});
  EXPECT_THROW(other.ensure_connected(), Error);
  ASSERT_GT(other.retry_after().count(), 0) << "inside the window";
  try {
    enqueue(other, QueueKeys("wire-window"), mint_job_id(), "p");
    FAIL() << "enqueued on a server that speaks emq/2";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Wire) << e.what();
    EXPECT_NE(std::string(e.what()).find("emq/2"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
  }
  seed.command({"DEL", "{emq}:version"});
}

// {emq}:version of another type (a hash, say) is another program's data:
// refused as another wire, not retried as if the server were away.
TEST_F(ExecutorWire, AVersionKeyOfTheWrongTypeIsRefusedAsAnotherWire) {
  Connection seed = raw_connection(5);
  seed.command({"DEL", "{emq}:version"});
  seed.command({"HSET", "{emq}:version", "v", "1"});
  ConnectionOptions o = server().options();
  o.db = 5;
  Executor other(o);
  try {
    other.ensure_connected();
    FAIL() << "connected to a server whose {emq}:version is a hash";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Wire) << e.what();
    EXPECT_NE(std::string(e.what()).find("EMQWIRE"), std::string::npos) << e.what();
  }
  seed.command({"DEL", "{emq}:version"});
}

// Executors sharing a ReconnectGroup: when one reaches the server, the
// others' reconnect wait is over; they try at once instead of sleeping out
// a backoff the server no longer needs.
TEST(ExecutorReconnect, AConnectByAnotherMemberOfTheGroupEndsTheBackoff) {
  ValkeyServer s;
  auto group = std::make_shared<ReconnectGroup>();
  const ReconnectPolicy slow{std::chrono::milliseconds(60000), std::chrono::milliseconds(60000), group};
  Executor a(s.options(), slow), b(s.options(), slow), alone(s.options(), {slow.initial, slow.max, nullptr});
  s.stop();
  EXPECT_THROW(a.ensure_connected(), Error);
  EXPECT_THROW(alone.ensure_connected(), Error);
  ASSERT_GT(a.retry_after().count(), 50000) << "a minute's backoff";
  s.start();
  b.ensure_connected();  // another connection sees the server back
  EXPECT_TRUE(a.server_back());
  EXPECT_EQ(a.retry_after().count(), 0);
  EXPECT_NO_THROW(a.ensure_connected()) << "tried at once";
  EXPECT_TRUE(a.connected());
  EXPECT_GT(alone.retry_after().count(), 50000) << "an executor of no group keeps its own backoff";
  EXPECT_THROW(alone.ensure_connected(), Error);
}

// A restarted server closed every connection of the group. The member that
// finds out by a failed call tells the others, and they reconnect before
// their next call instead of failing it; an executor of no group fails it.
TEST(ExecutorReconnect, AConnectionLostUnderOneMemberIsReplacedInTheOthersBeforeTheirNextCall) {
  ValkeyServer s;
  auto group = std::make_shared<ReconnectGroup>();
  const ReconnectPolicy quick{std::chrono::milliseconds(10), std::chrono::milliseconds(100), group};
  Executor a(s.options(), quick), b(s.options(), quick), alone(s.options(), {quick.initial, quick.max, nullptr});
  for (Executor* e : {&a, &b, &alone}) ASSERT_EQ(e->command({"PING"}).str, "PONG");
  s.stop();
  s.start();
  EXPECT_THROW(a.command({"PING"}), Error) << "the first call on a dead connection finds it dead";
  EXPECT_EQ(b.command({"PING"}).str, "PONG") << "b replaced its connection before calling";
  EXPECT_THROW(alone.command({"PING"}), Error) << "no group, no warning";
}

// A connection lost on its own (here killed by an operator) tells the
// group, but the others' connections are alive: each keeps its own.
TEST(ExecutorReconnect, AConnectionLostAloneLeavesTheOtherMembersTheirs) {
  ValkeyServer s;
  auto group = std::make_shared<ReconnectGroup>();
  const ReconnectPolicy quick{std::chrono::milliseconds(10), std::chrono::milliseconds(100), group};
  Executor a(s.options(), quick), b(s.options(), quick);
  const long long a_id = a.command({"CLIENT", "ID"}).integer;
  const long long b_id = b.command({"CLIENT", "ID"}).integer;
  ASSERT_EQ(b.command({"CLIENT", "KILL", "ID", std::to_string(a_id)}).integer, 1);
  EXPECT_THROW(a.command({"PING"}), Error) << "a finds its connection gone";
  EXPECT_EQ(b.command({"CLIENT", "ID"}).integer, b_id) << "b kept its connection";
  EXPECT_NE(a.command({"CLIENT", "ID"}).integer, a_id) << "a reconnected";
}

TEST_F(ExecutorWire, APasswordProtectedServerIsReachedWithThePassword) {
  const std::string secret = "s3cret-p@ss:word";
  ValkeyServer locked({false, {"--requirepass", secret}});
  QueueKeys k("auth");

  Executor anonymous(locked.options());
  try {
    anonymous.ensure_connected();
    FAIL() << "connected without the password";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NOAUTH"), std::string::npos) << e.what();
  }

  ConnectionOptions wrong = locked.options();
  wrong.password = "not-" + secret;
  Executor mistaken(wrong);
  try {
    mistaken.ensure_connected();
    FAIL() << "connected with a wrong password";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Reply);
    std::string m = e.what();
    EXPECT_NE(m.find("refused the login"), std::string::npos) << m;
    EXPECT_EQ(m.find(wrong.password), std::string::npos) << "the message must never carry the password";
  }

  ConnectionOptions right = locked.options();
  right.password = secret;
  Executor ok(right);
  std::string id = mint_job_id();
  EXPECT_EQ(enqueue(ok, k, id, "behind a password"), EnqueueResult::Enqueued);
  std::vector<ClaimedJob> jobs = claim(ok, k, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].payload, "behind a password");
  EXPECT_EQ(complete(ok, k, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);

  // The same through a URL, the password percent-encoded.
  ConnectionOptions from_url =
      parse_url("valkey://:s3cret-p%40ss%3Aword@127.0.0.1:" + std::to_string(locked.port()) + "/0");
  EXPECT_EQ(from_url.password, secret);
  EXPECT_EQ(from_url.redacted().find(secret), std::string::npos);
  Executor by_url(from_url);
  EXPECT_EQ(stats(by_url, k).counters["completed"], 1);
}

TEST_F(ExecutorWire, TheUnixSocketUrlReachesTheSameServer) {
  std::string id = enqueue_new("over tcp");
  Executor local(parse_url("unix://" + server().socket_path()));
  std::vector<ClaimedJob> jobs = claim(local, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_EQ(jobs[0].payload, "over tcp");
  EXPECT_EQ(complete(local, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  EXPECT_FALSE(exists(q.row_root + id));

  // ?db=N selects a database over the socket too.
  Executor db3(parse_url("unix://" + server().socket_path() + "?db=3"));
  std::string in3 = mint_job_id();
  ASSERT_EQ(enqueue(db3, q, in3, "in db 3"), EnqueueResult::Enqueued);
  EXPECT_FALSE(exists(q.row_root + in3)) << "db 0 must not see db 3's row";
  EXPECT_EQ(raw_connection(3).command({"HGET", q.row_root + in3, "payload"}).str, "in db 3");
}

}  // namespace
}  // namespace echomq::test
