// A flow on a three-shard cluster: a three-level tree over three queues,
// one per shard, enqueued with emq flow enqueue and run by emqd. Each
// transition touches one queue's slot, so every child is told to its
// parent through the outboxes across shards. The tree completes bottom-up:
// each handler records when it ran (intervals.h) and prints what it was
// given, so the test checks from the handlers' own records that every
// parent ran once, after all its children ended, with all their results.
#include <nlohmann/json.hpp>

#include <set>

#include "cluster_fixture.h"
#include "intervals.h"

namespace echomq::test {
namespace {

using nlohmann::json;

class ClusterFlows : public ClusterTest {
 protected:
  // Prints "<payload>|<EMQ_CHILDREN_FILE>|<its JSON>" (tests/handlers).
  static std::string flow_queue(const std::string& name, int keep_s, const std::string& record) {
    return "  - name: " + name + "\n    concurrency: 4\n    keep_completed_s: " + std::to_string(keep_s) +
           "\n    handler:\n      type: exec\n" + interval_handler_yaml(record, EMQ_TEST_HANDLERS "/flow_exec.sh");
  }
  std::int64_t zcard(const std::string& key) { return x.command({"ZCARD", key}).integer; }

  // What a parent's handler printed: its payload and the children it was given.
  struct Given {
    std::string payload;
    json children;
  };
  static Given given(const std::string& printed) {
    const std::size_t bar1 = printed.find('|'), bar2 = printed.find('|', bar1 + 1);
    if (bar2 == std::string::npos) throw std::runtime_error("not payload|file|json: " + printed);
    const std::string rest = printed.substr(bar2 + 1);
    return {printed.substr(0, bar1), rest.empty() ? json() : json::parse(rest)};
  }
};

TEST_F(ClusterFlows, AThreeLevelTreeOnThreeShardsCompletesBottomUpWithEveryResult) {
  const std::string root_q = queue_on(0, "froot"), mid_q = queue_on(1, "fmid"), leaf_q = queue_on(2, "fleaf");
  const std::string record = cluster.node(0).dir() + "/intervals";
  EmqdProcess d(config_head(3) + flow_queue(root_q, 600, record) + flow_queue(mid_q, 0, record) +
                flow_queue(leaf_q, 0, record));
  ASSERT_TRUE(d.wait_ready()) << d.log();

  const std::string tree = R"({"queue":")" + root_q + R"(","payload":"sheet","children":[
      {"queue":")" + mid_q +
                           R"(","payload":"m1","children":[
        {"queue":")" + leaf_q +
                           R"(","payload":"a"},{"queue":")" + leaf_q + R"(","payload":"b"}]},
      {"queue":")" + mid_q +
                           R"(","payload":"m2","children":[{"queue":")" + leaf_q + R"(","payload":"c"}]}]})";
  RunResult enq = run_program({emq_binary(), "flow", "enqueue", "-", "--json"}, tree, {"EMQ_URL=" + cluster.url(4)});
  ASSERT_EQ(enq.code, 0) << enq.err;
  const json ids = json::parse(enq.out);
  const std::string root_id = ids["id"];
  // mid payload -> its id, and its leaves' ids
  std::map<std::string, std::string> mid_ids;
  std::map<std::string, std::set<std::string>> leaves_of;
  ASSERT_EQ(ids["children"].size(), 2u) << enq.out;
  const char* mid_payloads[] = {"m1", "m2"};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string mid = ids["children"][i]["id"];
    mid_ids[mid_payloads[i]] = mid;
    for (const auto& leaf : ids["children"][i]["children"]) leaves_of[mid].insert(leaf["id"].get<std::string>());
  }

  QueueKeys root(root_q);
  ASSERT_TRUE(wait_for(
      [&] {
        return x.command({"HGET", root.row(root_id), "state"}).str == "completed";
      },
      seconds(60)))
      << d.log();

  // The root was given both mids, and each mid its leaves, with what each printed.
  const Given top = given(x.command({"HGET", root.row(root_id), "result"}).str);
  EXPECT_EQ(top.payload, "sheet");
  ASSERT_EQ(top.children.size(), 2u) << top.children.dump();
  std::set<std::string> mids_seen;
  for (const auto& m : top.children) {
    EXPECT_EQ(m["queue"], mid_q);
    EXPECT_EQ(m["outcome"], "completed");
    const std::string mid = m["id"];
    mids_seen.insert(mid);
    const Given g = given(m["result"]);
    ASSERT_EQ(mid_ids[g.payload], mid) << "the result of another job: " << m.dump();
    std::set<std::string> leaf_ids, leaf_payloads;
    for (const auto& l : g.children) {
      EXPECT_EQ(l["queue"], leaf_q);
      EXPECT_EQ(l["outcome"], "completed");
      leaf_ids.insert(l["id"].get<std::string>());
      const Given lg = given(l["result"]);
      EXPECT_TRUE(lg.children.is_null()) << "a leaf is no parent: " << l.dump();
      leaf_payloads.insert(lg.payload);
    }
    EXPECT_EQ(leaf_ids, leaves_of[mid]) << g.children.dump();
    EXPECT_EQ(leaf_payloads, g.payload == "m1" ? (std::set<std::string>{"a", "b"}) : (std::set<std::string>{"c"}));
  }
  EXPECT_EQ(mids_seen.size(), 2u);

  // Bottom-up, each once, from the handlers' records: a parent started
  // after every child of it had ended.
  const auto runs = read_intervals(record);
  ASSERT_EQ(runs.size(), 6u);
  for (const auto& [id, i] : runs) EXPECT_EQ(i.runs, 1) << id << " ran " << i.runs << " times";
  for (const auto& [payload, mid] : mid_ids) {
    ASSERT_EQ(runs.count(mid), 1u);
    EXPECT_GT(runs.at(root_id).start, runs.at(mid).end) << "the root began before " << payload << " ended";
    for (const std::string& leaf : leaves_of[mid]) {
      ASSERT_EQ(runs.count(leaf), 1u);
      EXPECT_GT(runs.at(mid).start, runs.at(leaf).end) << payload << " began before its leaf " << leaf << " ended";
    }
  }

  // Nothing left waiting or untold on any shard.
  for (const std::string& q : {root_q, mid_q, leaf_q}) {
    QueueKeys k(q);
    EXPECT_TRUE(wait_for([&] { return zcard(k.outbox) == 0; }, seconds(10))) << q << "'s outbox is not empty";
    EXPECT_EQ(zcard(k.waiting), 0) << q;
    EXPECT_EQ(zcard(k.pending) + zcard(k.active) + zcard(k.dead), 0) << q;
  }
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
}

}  // namespace
}  // namespace echomq::test
