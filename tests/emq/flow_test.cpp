// emq flow enqueue and emq flow show: a JSON tree in, its ids out, parent
// first; a bad tree refused whole, naming the node; the tree shown with
// each job's state and what its parent recorded of it.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/flows.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class FlowCli : public CliTest {
 protected:
  std::string sub(const std::string& suffix) const { return queue().substr(0, 60) + "." + suffix; }

  std::string tree() const {
    return R"({"queue":")" + queue() + R"(","payload":"sheet","on_child_failure":"ignore","children":[
      {"queue":")" +
           sub("k") + R"(","payload":"a.png"},
      {"queue":")" +
           sub("k") + R"(","payload":{"n":2},"lane":-5}]})";
  }

  // Completes every job of queue q in Flow mode and tells the parents.
  void run_children(const std::string& name) {
    QueueKeys k(name);
    std::vector<Reply> r = x().eval_batch({claim_call(k, {30000, 10, 0})});
    for (const ClaimedJob& j : decode_claim(std::move(r[0]))) {
      ASSERT_EQ(decode_complete(x().eval(complete_call(k, {j.id, j.lease_epoch}, 0, j.payload + "!", FlowMode::Flow))),
                CompleteResult::Completed);
      auto parent = parse_ref(x().command({"HGET", k.row(j.id), "parent"}).str);
      ASSERT_TRUE(parent);
      x().eval(
          child_done_call(QueueKeys(parent->queue), parent->id, k.ref(j.id), ChildOutcome::Completed, j.payload + "!"));
      x().eval(outbox_ack_call(k, j.id, 60000));
    }
  }
};

TEST_F(FlowCli, EnqueuePrintsTheIdsParentFirstAndShowFollowsTheTree) {
  EmqResult r = emq({"flow", "enqueue", "-"}, tree());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  std::vector<std::string> root = cells_of(lines[0]);
  ASSERT_EQ(root.size(), 2u);
  EXPECT_EQ(root[1], queue());
  EXPECT_EQ(lines[1].rfind("  JOB_", 0), 0u) << lines[1];
  const std::string child = cells_of(lines[2])[0];
  EXPECT_EQ(x().command({"HGET", keys().row(root[0]), "state"}).str, "waiting");
  EXPECT_EQ(x().command({"HGET", QueueKeys(sub("k")).row(child), "lane"}).str, "-5");
  EXPECT_EQ(x().command({"HGET", QueueKeys(sub("k")).row(child), "payload"}).str, R"({"n":2})");

  EmqResult shown = emq({"flow", "show", queue(), root[0]});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  std::vector<std::string> view = lines_of(shown.out);
  ASSERT_EQ(view.size(), 3u) << shown.out;
  EXPECT_NE(view[0].find("waiting"), std::string::npos) << view[0];
  EXPECT_NE(view[0].find("on_child_failure=ignore"), std::string::npos) << view[0];
  EXPECT_NE(view[1].find("pending  [awaited]"), std::string::npos) << view[1];

  run_children(sub("k"));
  shown = emq({"flow", "show", queue(), root[0], "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json j = nlohmann::json::parse(shown.out);
  EXPECT_EQ(j["state"], "pending");
  ASSERT_EQ(j["children"].size(), 2u);
  for (const auto& c : j["children"]) {
    EXPECT_EQ(c["state"], "completed") << "kept 60 s by outbox_ack";
    EXPECT_EQ(c["awaited"], false);
    EXPECT_EQ(c["told"]["outcome"], "completed");
  }
  std::set<std::string> texts{j["children"][0]["told"]["text"], j["children"][1]["told"]["text"]};
  EXPECT_EQ(texts, (std::set<std::string>{"a.png!", R"({"n":2}!)"}));
}

TEST_F(FlowCli, EnqueueJsonPrintsTheIdsAsATree) {
  EmqResult r = emq({"flow", "enqueue", "-", "--json"}, tree());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["queue"], queue());
  EXPECT_EQ(j["children"].size(), 2u);
  EXPECT_EQ(j["children"][0]["queue"], sub("k"));
}

TEST_F(FlowCli, ABadTreeIsRefusedWholeNamingTheNode) {
  const std::string bad =
      R"({"queue":")" + queue() + R"(","children":[{"queue":")" + sub("k") + R"(","children":[{"queue":"no way"}]}]})";
  EmqResult r = emq({"flow", "enqueue", "-"}, bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("root.children[0].children[0]"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(x().command({"EXISTS", keys().waiting}).integer, 0) << "nothing was written";

  r = emq({"flow", "enqueue", "-"}, R"({"queue":")" + queue() + R"(","colour":"red"})");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown key \"colour\""), std::string::npos) << r.err;
  r = emq({"flow", "enqueue", "-"}, "{not json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stdin is not JSON"), std::string::npos) << r.err;
}

// A node's "group" sends its job to its group: a leaf waits in the group's
// zset, a parent carries it in its row (its last child sends it there). A
// group that does not read is refused with the node named, nothing sent.
TEST_F(FlowCli, EachNodeMayNameItsGroup) {
  const std::string grouped = R"({"queue":")" + queue() + R"(","id":"JOB_p","group":"cust.42","children":[
      {"queue":")" + queue() + R"(","id":"JOB_a","group":"cust.42"},
      {"queue":")" + queue() + R"(","id":"JOB_b","group":"acme","lane":-3},
      {"queue":")" + queue() + R"(","id":"JOB_c"}]})";
  EmqResult r = emq({"flow", "enqueue", "-"}, grouped);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_p"), "group"}).str, "cust.42");
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_p"), "state"}).str, "waiting");
  EXPECT_EQ(x().command({"ZSCORE", keys().gq("cust.42"), "JOB_a"}).str, "0");
  EXPECT_EQ(x().command({"ZSCORE", keys().gq("acme"), "JOB_b"}).str, "-3");
  EXPECT_TRUE(x().command({"HGET", keys().row("JOB_c"), "group"}).is_nil());
  EXPECT_EQ(x().command({"ZRANGE", keys().pending, "0", "-1"}).elements.size(), 1u) << "JOB_c alone, ungrouped";

  for (const auto& [group, words] : std::vector<std::pair<std::string, std::string>>{
           {R"("a b")", "root.children[1]: group 'a b' is not a valid group: use 1-128 bytes of A-Z a-z 0-9 _ . : -"},
           {R"("")", R"(root.children[1]: "group" must be a string of 1-128 bytes of A-Z a-z 0-9 _ . : -)"},
           {"42", R"(root.children[1]: "group" must be a string of 1-128 bytes)"}}) {
    const std::string bad = R"({"queue":")" + sub("b") + R"(","children":[{"queue":")" + sub("b") + R"("},{"queue":")" +
                            sub("b") + R"(","group":)" + group + "}]}";
    r = emq({"flow", "enqueue", "-"}, bad);
    EXPECT_EQ(r.exit_code, 2) << group << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  QueueKeys b(sub("b"));
  EXPECT_EQ(x().command({"EXISTS", b.waiting, b.pending}).integer, 0) << "nothing was written";
}

// Issue 37, row 9.
TEST_F(FlowCli, AJobGivenTwiceInATreeIsRefusedBeforeAnySend) {
  const std::string self =
      R"({"queue":")" + queue() + R"(","id":"JOB_p","children":[{"queue":")" + queue() + R"(","id":"JOB_p"}]})";
  EmqResult r = emq({"flow", "enqueue", "-"}, self);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("root.children[0]: " + queue() + ":JOB_p is given twice in the tree (first at root)"),
            std::string::npos)
      << r.err;
  const std::string kid = R"({"queue":")" + sub("k") + R"(","id":"JOB_k"})";
  const std::string shared = R"({"queue":")" + queue() + R"(","children":[{"queue":")" + queue() + R"(","children":[)" +
                             kid + R"(]},{"queue":")" + queue() + R"(","children":[)" + kid + "]}]}";
  r = emq({"flow", "enqueue", "-"}, shared);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("root.children[1].children[0]: " + sub("k") +
                       ":JOB_k is given twice in the tree (first at root.children[0].children[0])"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(x().command({"EXISTS", keys().waiting, keys().pending}).integer, 0) << "nothing was written";
}

// Issue 37, row 10: 20,000 levels (2.4 MB) ended in bad_alloc, the memory
// growing with the square of the depth; now refused at level 65, in the
// memory of the input.
TEST_F(FlowCli, A20000LevelTreeIsRefusedAtLevel65InLittleMemory) {
  std::string deep;
  const int levels = 20000;
  for (int i = 0; i < levels; ++i) deep += R"({"queue":")" + queue() + R"(","payload":"a deep one","children":[)";
  deep += R"({"queue":")" + queue() + R"("})";
  for (int i = 0; i < levels; ++i) deep += "]}";
  ASSERT_GT(deep.size(), 2000000u);
#ifdef __SANITIZE_ADDRESS__
  const rlim_t cap = 0;  // the sanitizer reserves terabytes of address space
#else
  const rlim_t cap = rlim_t{1} << 30;  // so that a regression fails here, not the machine
#endif
  EmqResult r = run_emq({"flow", "enqueue", "-"}, {{"EMQ_URL", server().url()}}, deep, std::chrono::seconds(60), cap);
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 400);
  EXPECT_NE(r.err.find("].children[0]: the tree is deeper than 64 levels"), std::string::npos) << r.err.substr(0, 400);
  std::printf("figures: a %zu-byte tree of %d levels: exit %d, emq's peak memory %ld KiB\n", deep.size(), levels,
              r.exit_code, r.max_rss_kb);
  EXPECT_LT(r.max_rss_kb, 200 * 1024) << "emq's peak memory, in KiB";
  EXPECT_EQ(x().command({"EXISTS", keys().waiting}).integer, 0) << "nothing was written";
}

// Issue 37, row 17: a tree of one node is one plain job.
TEST_F(FlowCli, AOneNodeTreeIsEnqueuedAsAPlainJob) {
  EmqResult r = emq({"flow", "enqueue", "-"}, R"({"queue":")" + queue() + R"(","payload":"alone","lane":3})");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = cells_of(lines_of(r.out).at(0)).at(0);
  EXPECT_EQ(x().command({"HGET", keys().row(id), "state"}).str, "pending");
  EXPECT_EQ(x().command({"HEXISTS", keys().row(id), "parent"}).integer, 0);
  EXPECT_EQ(x().command({"ZSCORE", keys().pending, id}).str, "3");
}

// Issue 37, rows 11 and 13: a refusal half-way names the parent left
// waiting, and the command it names removes it.
TEST_F(FlowCli, AHalfWayRefusalNamesTheParentLeftWaiting) {
  ASSERT_FALSE(x().command({"SET", QueueKeys(sub("broken")).pending, "not a zset"}).is_error());
  const std::string tree = R"({"queue":")" + queue() + R"(","id":"JOB_root","children":[{"queue":")" + sub("broken") +
                           R"("},{"queue":")" + sub("k") + R"("}]})";
  EmqResult r = emq({"flow", "enqueue", "-"}, tree);
  EXPECT_NE(r.exit_code, 0);
  const std::string cancel = "emq cancel " + queue() + " JOB_root";
  EXPECT_NE(r.err.find("these parents now wait for a child that was not enqueued: " + queue() + ":JOB_root"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(cancel), std::string::npos) << r.err;
  EmqResult c = emq({"cancel", queue(), "JOB_root"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(x().command({"EXISTS", keys().row("JOB_root"), keys().deps("JOB_root")}).integer, 0);
  EXPECT_EQ(x().command({"ZCARD", keys().waiting}).integer, 0);
}

// Issue 37, row 13: emq cancel removes a waiting parent (it was refused,
// and the orphan warning's advice to cancel it could not be followed).
TEST_F(FlowCli, CancelRemovesAWaitingParentAndSaysItsChildrenRun) {
  EmqResult r = emq({"flow", "enqueue", "-"}, tree());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string parent = cells_of(lines_of(r.out)[0])[0];
  EmqResult c = emq({"cancel", queue(), parent});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "cancelled " + parent + "\n");
  EXPECT_NE(c.err.find("was a parent waiting for its children: they still run"), std::string::npos) << c.err;
  EXPECT_EQ(x().command({"EXISTS", keys().row(parent), keys().deps(parent)}).integer, 0);
  EXPECT_EQ(x().command({"ZCARD", keys().waiting}).integer, 0);
  EXPECT_EQ(x().command({"ZCARD", QueueKeys(sub("k")).pending}).integer, 2) << "its children are left to run";
}

TEST_F(FlowCli, ShowOfNoSuchJobExitsOne) {
  EmqResult r = emq({"flow", "show", queue(), "JOB_nope"});
  EXPECT_EQ(r.exit_code, 1);
}

// A chain of hand-made rows deeper than show reads: each level waits on
// the next. Returns the ids, root first.
std::vector<std::string> chain(Executor& x, const QueueKeys& q, int length) {
  std::vector<std::string> ids;
  for (int i = 0; i < length; ++i) ids.push_back("JOB_link" + std::to_string(i));
  for (int i = 0; i < length; ++i) {
    const bool last = i + 1 == length;
    x.command({"HSET", q.row(ids[i]), "state", last ? "pending" : "waiting", "attempts", "0", "payload", ""});
    if (!last) x.command({"SADD", q.deps(ids[i]), q.ref(ids[i + 1])});
  }
  return ids;
}

TEST_F(FlowCli, ShowSaysWhereADeepTreeIsCutAndHowToGoOn) {
  const std::vector<std::string> ids = chain(x(), keys(), 20);
  EmqResult r = emq({"flow", "show", queue(), ids[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 18u) << r.out;
  for (int i = 0; i < 17; ++i) EXPECT_NE(lines[i].find(ids[i] + "  waiting"), std::string::npos) << lines[i];
  EXPECT_EQ(r.out.find("(no row)"), std::string::npos) << r.out;
  EXPECT_NE(lines[17].find(ids[17]), std::string::npos) << lines[17];
  EXPECT_NE(lines[17].find("[awaited]  (cut: more than 16 levels down; emq flow show " + queue() + " " + ids[17] +
                           " goes on from here)"),
            std::string::npos)
      << lines[17];

  EmqResult j = emq({"flow", "show", queue(), ids[0], "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  nlohmann::json node = nlohmann::json::parse(j.out);
  for (int i = 0; i < 17; ++i) node = node["children"][0];
  EXPECT_EQ(node["id"], ids[17]);
  EXPECT_EQ(node["cut"], "depth") << node;
  EXPECT_FALSE(node.contains("state")) << "not read: " << node;

  EmqResult on = emq({"flow", "show", queue(), ids[17]});
  EXPECT_EQ(lines_of(on.out).size(), 3u) << on.out;
}

// Deps that name each other (another writer's, or a flow given one id
// twice): each job is read and shown once; where it comes again, the
// line says so. Three rows each waiting on all three unfolded 3^16 views.
TEST_F(FlowCli, ShowFollowsEachJobOnceWhenDepsNameEachOther) {
  const QueueKeys& q = keys();
  for (const char* id : {"JOB_a", "JOB_b"}) x().command({"HSET", q.row(id), "state", "waiting"});
  x().command({"SADD", q.deps("JOB_a"), q.ref("JOB_b")});
  x().command({"SADD", q.deps("JOB_b"), q.ref("JOB_a")});
  EmqResult r = emq({"flow", "show", queue(), "JOB_a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(lines_of(r.out).size(), 3u) << r.out;
  EXPECT_NE(lines_of(r.out)[2].find("JOB_a  [awaited]  (shown elsewhere in this tree; not followed again)"),
            std::string::npos)
      << r.out;

  x().command({"HSET", q.row("JOB_c"), "state", "waiting"});
  for (const char* id : {"JOB_a", "JOB_b", "JOB_c"})
    x().command({"SADD", q.deps(id), q.ref("JOB_a"), q.ref("JOB_b"), q.ref("JOB_c")});
  r = emq({"flow", "show", queue(), "JOB_a", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::size_t read = 0, repeats = 0;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& n) {
    if (n.value("cut", "") == "repeat") ++repeats;
    if (!n.contains("cut")) ++read;
    if (n.contains("children"))
      for (const auto& c : n["children"]) walk(c);
  };
  walk(j);
  EXPECT_EQ(read, 3u) << r.out;
  EXPECT_EQ(repeats, 7u) << r.out;  // a under a; a, b and c under b and under c
}

// Bytes that are not UTF-8 in an id or a state (another writer's) are
// shown, with their exact bytes in hex beside them; it was
// "unexpected failure: json", exit 3.
TEST_F(FlowCli, ShowJsonShowsBytesThatAreNotUtf8InHex) {
  const QueueKeys& q = keys();
  x().command({"HSET", q.row("JOB_p"), "state", "waiting", "children", "1"});
  x().command({"SADD", q.deps("JOB_p"), q.ref("JOB_\xff")});
  x().command({"HSET", q.row("JOB_\xff"), "state", "pend\xfe", "parent", q.ref("JOB_p")});
  EmqResult r = emq({"flow", "show", queue(), "JOB_p", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["children"].size(), 1u) << r.out;
  EXPECT_EQ(j["children"][0]["id_hex"], "4a4f425fff") << r.out;
  EXPECT_EQ(j["children"][0]["state_hex"], "70656e64fe") << r.out;
  EXPECT_FALSE(j.contains("id_hex")) << "JOB_p is UTF-8";
}

}  // namespace
}  // namespace echomq::test
