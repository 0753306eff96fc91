// emq flow enqueue and emq flow show: a JSON tree in, its ids out, parent
// first; a bad tree refused whole, naming the node; the tree shown with
// each job's state and what its parent recorded of it.
#include <gtest/gtest.h>

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
      x().eval(child_done_call(QueueKeys(parent->first), parent->second, k.ref(j.id), ChildOutcome::Completed,
                               j.payload + "!"));
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

TEST_F(FlowCli, CancelOfAWaitingParentSaysWhyAndWhatToDo) {
  EmqResult r = emq({"flow", "enqueue", "-"}, tree());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string parent = cells_of(lines_of(r.out)[0])[0];
  EmqResult c = emq({"cancel", queue(), parent});
  EXPECT_EQ(c.exit_code, 4);
  EXPECT_NE(c.err.find(parent + " is a parent waiting for its children and was not cancelled: cancel or finish "
                                "its children first"),
            std::string::npos)
      << c.err;
  EXPECT_EQ(c.err.find("running"), std::string::npos) << "it is not running: " << c.err;
  EXPECT_EQ(x().command({"HGET", keys().row(parent), "state"}).str, "waiting");
}

TEST_F(FlowCli, ShowOfNoSuchJobExitsOne) {
  EmqResult r = emq({"flow", "show", queue(), "JOB_nope"});
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace echomq::test
