#include "echomq/keyspace.h"

#include <gtest/gtest.h>

#include "echomq/errors.h"

namespace echomq {
namespace {

TEST(QueueName, AcceptsTheAllowedBytes) {
  for (const char* ok : {"a", "emails", "Q_1.v-2", "0", "a.b.c"}) EXPECT_TRUE(valid_queue_name(ok)) << ok;
  EXPECT_TRUE(valid_queue_name(std::string(64, 'x')));
}

TEST(QueueName, RefusesEverythingElse) {
  for (const char* bad : {"", "a{b", "a}b", "a:b", "a b", "tab\t", "é", "a/b", "a*"}) {
    EXPECT_FALSE(valid_queue_name(bad)) << bad;
  }
  EXPECT_FALSE(valid_queue_name(std::string(65, 'x')));
  EXPECT_FALSE(valid_queue_name(std::string("a\0b", 3)));
}

TEST(QueueName, RefusalIsATypedErrorBeforeAnyKey) {
  try {
    QueueKeys keys("bad:name");
    FAIL() << "built keys for an invalid name";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("bad:name"), std::string::npos);
  }
}

TEST(QueueKeys, SpellTheWireKeys) {
  QueueKeys k("orders");
  EXPECT_EQ(k.pending, "emq:{orders}:pending");
  EXPECT_EQ(k.active, "emq:{orders}:active");
  EXPECT_EQ(k.delayed, "emq:{orders}:delayed");
  EXPECT_EQ(k.dead, "emq:{orders}:dead");
  EXPECT_EQ(k.stats, "emq:{orders}:stats");
  EXPECT_EQ(k.meta, "emq:{orders}:meta");
  EXPECT_EQ(k.row_root, "emq:{orders}:job:");
  EXPECT_EQ(k.row("JOB_1"), "emq:{orders}:job:JOB_1");
  EXPECT_EQ(k.cron, "emq:{orders}:cron");
  EXPECT_EQ(k.schedules, "emq:{orders}:schedules");
  EXPECT_EQ(k.waiting, "emq:{orders}:waiting");
  EXPECT_EQ(k.outbox, "emq:{orders}:outbox");
  EXPECT_EQ(k.deps("JOB_1"), "emq:{orders}:deps:JOB_1");
  EXPECT_EQ(k.results("JOB_1"), "emq:{orders}:results:JOB_1");
  EXPECT_EQ(k.ref("JOB_1"), "orders:JOB_1");
  EXPECT_EQ(kVersionKey, "{emq}:version");
  EXPECT_EQ(kWireVersion, "emq/1");
  EXPECT_EQ(kQueuesKey, "{emq}:queues");
}

TEST(QueueKeys, RowRefusesAnIdPastNoWireGate) {
  QueueKeys k("orders");
  EXPECT_THROW(k.row("TASK_1"), Error);
  EXPECT_THROW(k.row(""), Error);
}

// Ids read back from the server are settled whatever their shape once they
// pass the wire's gate (PROTOCOL.md, "Names"): a peer may have written them.
TEST(QueueKeys, RowTakesAnyIdThatPassesTheWireGate) {
  QueueKeys k("orders");
  EXPECT_EQ(k.row("JOBX1"), "emq:{orders}:job:JOBX1");
  EXPECT_EQ(k.row("JOB\n2"), "emq:{orders}:job:JOB\n2");
  EXPECT_EQ(k.row("JOB"), "emq:{orders}:job:JOB");
}

}  // namespace
}  // namespace echomq
