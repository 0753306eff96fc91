// emq groups: a queue's groups, largest backlogs first, with each one's
// counts, policy and place; emq group set|pause|resume: a group's policy,
// merged with what it runs by and written through group_set, which the
// next claim obeys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/transitions.h"

namespace echomq::test {
namespace {

class GroupsCli : public CliTest {
 protected:
  void put(const std::string& group, int n) {
    for (int i = 0; i < n; ++i) {
      EnqueueOptions o;
      o.group = group;
      ASSERT_EQ(enqueue(x(), keys(), "JOB_" + group + "-" + std::to_string(made_++), "p", o), EnqueueResult::Enqueued);
    }
  }
  int made_ = 0;
  Reply own(const std::string& group) { return x().command({"HGET", keys().groups, group}); }
  // The groups of the ids a claim of n leases, in order.
  std::vector<std::string> claimed_groups(std::int64_t n) {
    std::vector<std::string> out;
    for (const ClaimedJob& j : claim(x(), keys(), {30000, n, 0})) out.push_back(j.id.substr(4, j.id.find('-') - 4));
    return out;
  }
};

// Test names are queue names here: at most 64 bytes with the suite's.
TEST_F(GroupsCli, ListsLargestBacklogsFirstWithPolicyAndPlace) {
  put("acme", 5);
  put("bolt", 3);
  put("calm", 1);
  ASSERT_EQ(emq({"group", "set", queue(), "acme", "--weight", "3"}).exit_code, 0);
  ASSERT_EQ(emq({"group", "pause", queue(), "bolt"}).exit_code, 0);
  ASSERT_EQ(claimed_groups(1), (std::vector<std::string>{"acme"}));

  EmqResult r = emq({"groups", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(cells_of(lines[0]), (std::vector<std::string>{"GROUP", "PENDING", "ACTIVE", "WEIGHT", "MAX_ACTIVE", "RATE",
                                                          "POLICY", "PLACE", "TURN"}));
  // acme mid-turn at the head (2 of its 3 claims left); bolt held (still
  // in the list until a claim reaches it, so its turn is not shown); calm.
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"acme", "4", "1", "3", "-", "-", "own", "rotation", "1"}));
  EXPECT_EQ(cells_of(lines[2]), (std::vector<std::string>{"bolt", "3", "0", "1", "-", "-", "own", "paused", "-"}));
  EXPECT_EQ(cells_of(lines[3]),
            (std::vector<std::string>{"calm", "1", "0", "1", "-", "-", "default", "rotation", "3"}));
  EXPECT_EQ(lines[4], queue() +
                          ": 3 groups holding keys, 8 jobs pending in them, 3 in the rotation; default policy "
                          "weight 1");

  r = emq({"groups", queue(), "--limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(lines_of(r.out).size(), 3u) << r.out;
  EXPECT_NE(r.out.find("(the largest backlog shown: --limit)"), std::string::npos) << r.out;

  r = emq({"groups", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["groups"], 3);
  EXPECT_EQ(j["grouped_pending"], 8);
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_EQ(j["top"][0]["group"], "acme");
  EXPECT_EQ(j["top"][0]["policy"]["weight"], 3);
  EXPECT_EQ(j["top"][0]["turn"], 1);
  EXPECT_EQ(j["top"][1]["policy"]["paused"], true);
  EXPECT_EQ(j["top"][1]["place"], "paused");
  EXPECT_TRUE(j["top"][2]["own_policy"].is_null());

  // A queue without groups: the totals line alone.
  r = emq({"groups", "GroupsCli.none"});
  EXPECT_EQ(r.out,
            "GroupsCli.none: 0 groups holding keys, 0 jobs pending in them, 0 in the rotation; default "
            "policy weight 1\n");
}

// A group paused or given a policy before its first job is listed at
// once, at 0 and 0, after the groups that hold keys (names descending),
// within --limit; --json says when rows were left out.
TEST_F(GroupsCli, ListsGroupsWithAPolicyAndNoJobsAfterThoseHoldingKeys) {
  ASSERT_EQ(emq({"group", "pause", queue(), "acme"}).exit_code, 0);
  EmqResult r = emq({"groups", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(cells_of(lines[1]), (std::vector<std::string>{"acme", "0", "0", "1", "-", "-", "own", "paused", "-"}));
  EXPECT_EQ(lines[2], queue() +
                          ": 0 groups holding keys, 0 jobs pending in them, 0 in the rotation; default policy "
                          "weight 1");

  ASSERT_EQ(emq({"group", "set", queue(), "zeta", "--weight", "4"}).exit_code, 0);
  ASSERT_EQ(emq({"group", "set", queue(), "--default", "--max-active", "3"}).exit_code, 0);
  put("bolt", 2);
  ASSERT_EQ(emq({"group", "set", queue(), "bolt", "--weight", "2"}).exit_code, 0);
  put("calm", 1);
  r = emq({"groups", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6u) << r.out;
  std::vector<std::string> names;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) names.push_back(cells_of(lines[i])[0]);
  EXPECT_EQ(names, (std::vector<std::string>{"bolt", "calm", "zeta", "acme"}))
      << "those holding keys by backlog, then those with a policy alone, names descending\n"
      << r.out;
  EXPECT_EQ(cells_of(lines[3]), (std::vector<std::string>{"zeta", "0", "0", "4", "-", "-", "own", "out", "-"}));
  EXPECT_EQ(cells_of(lines[4]), (std::vector<std::string>{"acme", "0", "0", "1", "-", "-", "own", "paused", "-"}))
      << "paused before the default had a cap: its own policy has none";
  EXPECT_EQ(lines[5].find("shown: --limit"), std::string::npos) << lines[5];

  // The bound: rows past --limit are left out, and the line says so.
  r = emq({"groups", queue(), "--limit", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(cells_of(lines[3])[0], "zeta");
  EXPECT_NE(lines[4].find("(the 3 largest backlogs shown: --limit)"), std::string::npos) << lines[4];
  r = emq({"groups", queue(), "--limit", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["groups"], 2) << "the groups holding keys";
  EXPECT_EQ(j["policies"], 3) << "acme, bolt and zeta; the default is not one";
  EXPECT_EQ(j["more"], true);
  r = emq({"groups", queue(), "--json"});
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["more"], false);
  ASSERT_EQ(j["top"].size(), 4u);
  EXPECT_EQ(j["top"][3]["group"], "acme");
  EXPECT_EQ(j["top"][3]["own_policy"], "paused=1");
  EXPECT_EQ(j["top"][3]["place"], "paused");

  // Reset, zeta runs by the default and holds no keys: nothing to list.
  ASSERT_EQ(emq({"group", "set", queue(), "zeta", "--reset"}).exit_code, 0);
  r = emq({"groups", queue()});
  EXPECT_EQ(r.out.find("zeta"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("acme"), std::string::npos) << r.out;
}

TEST_F(GroupsCli, SetMergesWithWhatTheGroupRunsByAndClaimObeys) {
  EmqResult r = emq({"group", "set", queue(), "--default", "--max-active", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "default policy of " + queue() + ": weight 1, max_active 5\n");
  EXPECT_EQ(own("*").str, "max_active=5");

  // acme ran by the default: a new weight keeps the default's cap.
  r = emq({"group", "set", queue(), "acme", "--weight", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "group acme of " + queue() + ": weight 3, max_active 5 (its own policy)\n");
  EXPECT_EQ(own("acme").str, "weight=3 max_active=5");
  ASSERT_EQ(emq({"group", "set", queue(), "acme", "--rate", "10/1s", "--max-active", "off"}).exit_code, 0);
  EXPECT_EQ(own("acme").str, "weight=3 rate_max=10 rate_window_ms=1000");
  ASSERT_EQ(emq({"group", "set", queue(), "acme", "--max-active", "2"}).exit_code, 0);
  EXPECT_EQ(own("acme").str, "weight=3 max_active=2 rate_max=10 rate_window_ms=1000");

  put("acme", 4);
  put("bolt", 2);
  // acme's cap of 2 (its own policy), then bolt's turn: two of three weights.
  EXPECT_EQ(claimed_groups(6), (std::vector<std::string>{"acme", "acme", "bolt", "bolt"}));

  // Paused, bolt's jobs wait; resumed, its policy is the default's again
  // and its own field goes.
  put("bolt", 1);
  r = emq({"group", "pause", queue(), "bolt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "group bolt of " + queue() + ": weight 1, max_active 5, paused (its own policy)\n");
  EXPECT_EQ(own("bolt").str, "max_active=5 paused=1");
  EXPECT_TRUE(claimed_groups(5).empty()) << "acme is at its cap, bolt is paused";
  r = emq({"group", "resume", queue(), "bolt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "group bolt of " + queue() + ": weight 1, max_active 5 (the default policy); in the rotation\n");
  EXPECT_TRUE(own("bolt").is_nil());
  EXPECT_EQ(claimed_groups(5), (std::vector<std::string>{"bolt"}));

  r = emq({"group", "set", queue(), "acme", "--reset"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(own("acme").is_nil());
  EXPECT_EQ(r.out, "group acme of " + queue() + ": weight 1, max_active 5 (the default policy); in the rotation\n")
      << "out of its cap's wait, acme is back in the rotation with its jobs";
}

TEST_F(GroupsCli, BadValuesAreUsageErrorsSayingWhatToDo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"group", "set", queue(), "acme", "--weight", "0"}, "--weight: expected 1..1000"},
      {{"group", "set", queue(), "acme", "--weight", "1001"}, "--weight: expected 1..1000"},
      {{"group", "set", queue(), "acme", "--weight", "x"}, "--weight: expected 1..1000"},
      {{"group", "set", queue(), "acme", "--max-active", "0"}, "--max-active"},
      {{"group", "set", queue(), "acme", "--rate", "5"}, "--rate"},
      {{"group", "set", queue(), "a b", "--weight", "2"}, "use 1-128 bytes of A-Z a-z 0-9 _ . : -"},
      {{"group", "set", queue(), "acme"}, "give --weight, --max-active, --rate or --reset"},
      {{"group", "set", queue(), "acme", "--default", "--weight", "2"}, "give GROUP or --default, not both"},
      {{"group", "set", queue(), "--weight", "2"}, "give the GROUP, or --default for the default policy"},
      {{"group", "pause", queue(), "*"}, "cannot be paused: pause each group (emq group pause QUEUE GROUP)"},
      {{"groups", queue(), "--limit", "0"}, "--limit 0 is out of range: use 1..1000"},
  };
  for (const auto& [args, words] : cases) {
    EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
  EXPECT_EQ(x().command({"EXISTS", keys().groups}).integer, 0) << "nothing was written";

  // A policy another writer broke is shown as such, and set again here.
  x().command({"HSET", keys().groups, "acme", "weight=lots"});
  put("acme", 1);
  EmqResult r = emq({"groups", queue()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("broken"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("group acme's policy is broken (weight must be an integer in 1..1000): claim serves none of its "
                       "jobs; set it again (emq group set " +
                       queue() + " acme ...)"),
            std::string::npos)
      << r.err;
  r = emq({"group", "set", queue(), "acme", "--weight", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: the policy read was broken"), std::string::npos) << r.err;
  EXPECT_EQ(own("acme").str, "weight=2");
}

}  // namespace
}  // namespace echomq::test
