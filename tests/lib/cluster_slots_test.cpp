// The cluster arithmetic a client must share with the server: a key's slot
// (the expected values are what a real valkey-server 8.0 answered to
// CLUSTER KEYSLOT), redirections read, a CLUSTER SLOTS answer turned into a
// map. The cluster suite (tests/cluster/) checks key_slot against a live
// node too.
#include <gtest/gtest.h>

#include "echomq/cluster.h"

namespace echomq {
namespace {

TEST(ClusterSlots, KeySlotMatchesWhatTheServerAnswers) {
  const std::pair<const char*, int> known[] = {
      {"", 0},
      {"a", 15495},
      {"foo", 12182},
      {"123456789", 12739},
      {"emq:{emails}:pending", 3728},
      {"{emq}:version", 9051},
      {"{emq}:queues", 9051},
      {"emq:{a}:job:JOB_x", 15495},
      {"{}x", 10595},  // an empty tag: the whole key counts
      {"x{}y", 16116},
      {"{a}{b}", 15495},  // the first tag only
      {"a{b", 13340},     // no closing brace: the whole key
      {"\xc3\xa9mq:{q}", 11958},
      {"emq:{thumbs}:active", 7290},
  };
  for (const auto& [key, slot] : known) EXPECT_EQ(key_slot(key), slot) << "key '" << key << "'";
}

TEST(ClusterSlots, EveryKeyOfAQueueSharesOneSlot) {
  EXPECT_EQ(key_slot("emq:{emails}:pending"), key_slot("emq:{emails}:job:JOB_123"));
  EXPECT_EQ(key_slot("emq:{emails}:meta"), key_slot("emails"));
}

TEST(ClusterSlots, RoutingKeyIsTheFirstArgumentOfKeyedCommands) {
  EXPECT_EQ(routing_key({"ZCARD", "emq:{q}:pending"}), "emq:{q}:pending");
  EXPECT_EQ(routing_key({"HSET", "emq:{q}:meta", "paused", "1"}), "emq:{q}:meta");
  EXPECT_EQ(routing_key({"TIME"}), "");
  EXPECT_EQ(routing_key({"CONFIG", "GET", "maxmemory-policy"}), "");
  EXPECT_EQ(routing_key({"config", "get", "x"}), "");
}

TEST(ClusterSlots, RedirectionsAreRead) {
  Reply moved;
  moved.type = Reply::Type::Error;
  moved.str = "MOVED 3999 127.0.0.1:6381";
  Redirect r;
  ASSERT_TRUE(parse_redirect(moved, r));
  EXPECT_FALSE(r.ask);
  EXPECT_EQ(r.slot, 3999);
  EXPECT_EQ(r.node.host, "127.0.0.1");
  EXPECT_EQ(r.node.port, 6381);

  Reply ask = moved;
  ask.str = "ASK 12 ::1:7000";
  ASSERT_TRUE(parse_redirect(ask, r));
  EXPECT_TRUE(r.ask);
  EXPECT_EQ(r.node.host, "::1");
  EXPECT_EQ(r.node.port, 7000);

  Reply other = moved;
  other.str = "TRYAGAIN Multiple keys request during rehashing of slot";
  EXPECT_FALSE(parse_redirect(other, r));
}

Reply integer(std::int64_t v) {
  Reply r;
  r.type = Reply::Type::Integer;
  r.integer = v;
  return r;
}
Reply text(std::string s) {
  Reply r;
  r.type = Reply::Type::String;
  r.str = std::move(s);
  return r;
}
Reply array(std::vector<Reply> e) {
  Reply r;
  r.type = Reply::Type::Array;
  r.elements = std::move(e);
  return r;
}

TEST(ClusterSlots, MapFromClusterSlotsNamesEachSlotsPrimary) {
  Reply slots = array({
      array({integer(0), integer(5460), array({text("10.0.0.1"), integer(7000), text("id1")}),
             array({text("10.0.0.4"), integer(7003), text("id4")})}),
      array({integer(5461), integer(16383), array({text("?"), integer(7001), text("id2")})}),
  });
  SlotMap map = SlotMap::from_cluster_slots(slots, "seed.example");
  ASSERT_EQ(map.primaries().size(), 2u);
  EXPECT_EQ(map.covered(), 16384u);
  EXPECT_EQ(map.owner(0)->name(), "10.0.0.1:7000");
  EXPECT_EQ(map.owner(5460)->name(), "10.0.0.1:7000");
  EXPECT_EQ(map.owner(5461)->name(), "seed.example:7001");  // no endpoint announced
  map.assign(5461, NodeAddress{"10.0.0.1", 7000});
  EXPECT_EQ(map.owner(5461)->name(), "10.0.0.1:7000");
}

TEST(ClusterSlots, NodeOptionsKeepTheLoginAndTheCertificateName) {
  ConnectionOptions seed = parse_url("valkeys://user:pw@cache.example:6380/0");
  ConnectionOptions n = node_options(seed, NodeAddress{"10.0.0.7", 7005});
  EXPECT_EQ(n.host, "10.0.0.7");
  EXPECT_EQ(n.port, 7005);
  EXPECT_EQ(n.password, "pw");
  EXPECT_EQ(n.tls.server_name, "cache.example");
  ConnectionOptions by_address = node_options(parse_url("valkeys://127.0.0.1:6380"), NodeAddress{"127.0.0.2", 1});
  EXPECT_EQ(by_address.tls.server_name, "");  // verified against the node's own address
}

}  // namespace
}  // namespace echomq
