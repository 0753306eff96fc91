// `groups:` in defaults and per queue: a default policy and each group's
// own, replaced whole like `limits:`, and every bad value named with its
// file, line and key.
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

constexpr const char* kGroupsHandler = "    handler: { type: exec, command: [/bin/cat] }\n";

TEST(ConfigGroups, DefaultAndOverridesAreReadAndAQueuesGroupsReplaceTheDefaultsWhole) {
  TempDir dir;
  const Config c = load_config(dir.write(
      "groups.yaml",
      std::string("defaults:\n  groups: { default: { weight: 2 } }\nqueues:\n") +
          "  - name: tenants\n    groups:\n      default: { weight: 1, max_active: 5, rate: { max: 10, per: 1s } }\n"
          "      overrides:\n        acme: { weight: 3 }\n        bolt: { max_active: 2, paused: true }\n"
          "        calm: {}\n" +
          kGroupsHandler + "  - name: inherits\n" + kGroupsHandler));
  ASSERT_EQ(c.queues.size(), 2u);
  ASSERT_TRUE(c.queues[0].groups);
  const QueueGroups& g = *c.queues[0].groups;
  EXPECT_EQ(g.fallback.weight, 1);
  EXPECT_EQ(g.fallback.max_active, 5);
  EXPECT_EQ(g.fallback.rate, (RateLimit{10, 1000}));
  ASSERT_EQ(g.overrides.size(), 3u);
  EXPECT_EQ(g.overrides.at("acme").weight, 3);
  EXPECT_FALSE(g.overrides.at("acme").max_active) << "a group's own policy replaces the default whole";
  EXPECT_EQ(g.overrides.at("bolt").max_active, 2);
  EXPECT_TRUE(g.overrides.at("bolt").paused);
  EXPECT_EQ(g.overrides.at("calm"), GroupPolicy{});
  ASSERT_TRUE(c.queues[1].groups);
  EXPECT_EQ(c.queues[1].groups->fallback.weight, 2);
  EXPECT_TRUE(c.queues[1].groups->overrides.empty());

  const Config none = load_config(dir.write("none.yaml", std::string("queues:\n  - name: q\n") + kGroupsHandler));
  EXPECT_FALSE(none.queues[0].groups) << "no groups: the server's are left as they are";
}

// A queue q whose `groups:` mapping is `body` (from line 4) is refused
// with one error at `line`, naming `key` and saying `fragment`.
void expect_groups_refused(const std::string& body, int line, const std::string& key, const std::string& fragment) {
  TempDir dir;
  const std::string text = std::string("queues:\n  - name: q\n    groups:\n") + body + kGroupsHandler;
  expect_one_error_at(dir.write("g.yaml", text), line, key, fragment);
}

TEST(ConfigGroups, ABadWeightIsNamedWithItsLineAndKey) {
  expect_groups_refused("      overrides: { acme: { weight: 1001 } }\n", 4, "queues[0].groups.overrides.acme.weight",
                        "expected a whole number in 1..1000");
  expect_groups_refused("      default:\n        weight: 0\n", 5, "queues[0].groups.default.weight", "claims per turn");
}

TEST(ConfigGroups, ABadGroupNameIsNamedWithItsLine) {
  expect_groups_refused("      overrides:\n        \"a b\": { weight: 2 }\n", 5, "queues[0].groups.overrides",
                        "expected group names of 1-128 bytes");
  expect_groups_refused("      overrides:\n        \"*\": { weight: 2 }\n", 5, "queues[0].groups.overrides",
                        "the default policy is groups.default");
}

TEST(ConfigGroups, ARateHalfGivenAndAPausedDefaultAreRefused) {
  expect_groups_refused("      default: { rate: { max: 10 } }\n", 4, "queues[0].groups.default.rate",
                        "expected both max and per");
  expect_groups_refused("      default: { paused: true }\n", 4, "queues[0].groups.default.paused",
                        "the default policy cannot be paused");
  TempDir dir;
  const std::string errors = joined(load_errors(dir.write("u.yaml", std::string("queues:\n  - name: q\n    groups:\n") +
                                                                        "      overrides: { acme: { weigth: 2 } }\n"
                                                                        "      tenants: 3\n" +
                                                                        kGroupsHandler)));
  EXPECT_NE(errors.find(":4: queues[0].groups.overrides.acme.weigth: unknown key; did you mean weight?"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find(":5: queues[0].groups.tenants"), std::string::npos) << errors;
}

}  // namespace
}  // namespace echomq::daemon::test
