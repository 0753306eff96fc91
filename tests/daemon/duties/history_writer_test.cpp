// The history writer against a real valkey-server: two writers of one
// interval leave one sample (the first), each minute and day gets its own,
// what is past keeping is trimmed, and a full day of samples costs what
// docs/web.md says. The writers' clock is the test's, so no test waits for
// a real minute to pass.
#include "duties/history_writer.h"

#include <gtest/gtest.h>

#include <iostream>

#include "echomq/errors.h"
#include "echomq/history.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A day's first minute, so a test's minutes all fall in one day.
constexpr std::int64_t kDay = 20'500;
constexpr std::int64_t kStartMs = kDay * kHistoryDayMs + 30'000;

class HistoryWriterTest : public ::testing::Test {
 protected:
  HistoryWriter::Params params(std::vector<std::string> queues) {
    HistoryWriter::Params p;
    p.queues = std::move(queues);
    p.now_ms = [this] { return now_ms.load(); };
    p.max_wait = milliseconds(20);
    return p;
  }

  // One job through claim and complete: claimed and completed go up by one.
  void run_one(const QueueKeys& q) {
    enqueue(x, q, mint_job_id(), "p");
    std::vector<ClaimedJob> got = claim(x, q, {30000, 1, 0});
    ASSERT_EQ(got.size(), 1u);
    complete(x, q, {got[0].id, got[0].lease_epoch}, 0, "ok");
  }

  std::string field(HistoryGrain g, const std::string& queue, std::int64_t n) {
    Reply r = x.command({"HGET", history_key(queue, g), std::to_string(n)});
    return r.is_nil() ? "(none)" : r.str;
  }

  std::int64_t fields(HistoryGrain g, const std::string& queue) {
    return x.command({"HLEN", history_key(queue, g)}).integer;
  }

  // Waits until the writer has finished a round begun after this call.
  static bool another_round(const HistoryWriter& w) {
    const std::int64_t seen = w.rounds();
    return test::wait_for([&] { return w.rounds() >= seen + 2; }, seconds(5));
  }

  test::ValkeyServer server;
  Executor x{server.options()};
  std::atomic<std::int64_t> now_ms{kStartMs};
};

TEST_F(HistoryWriterTest, TwoWritersOfOneIntervalLeaveOneSampleTheFirst) {
  QueueKeys q("hist");
  run_one(q);
  run_one(q);
  const std::int64_t minute = kStartMs / kHistoryMinuteMs;

  HistoryWriter first(params({"hist"}), server.options());
  first.start();
  ASSERT_TRUE(test::wait_for([&] { return field(HistoryGrain::Minute, "hist", minute) != "(none)"; }, seconds(5)));
  EXPECT_EQ(field(HistoryGrain::Minute, "hist", minute), "2 2 0 0");

  // The counters move; a second writer of the same minute writes nothing.
  run_one(q);
  HistoryWriter second(params({"hist"}), server.options());
  second.start();
  ASSERT_TRUE(another_round(second));
  ASSERT_TRUE(another_round(first));
  EXPECT_EQ(fields(HistoryGrain::Minute, "hist"), 1);
  EXPECT_EQ(field(HistoryGrain::Minute, "hist", minute), "2 2 0 0") << "the first write of an interval stays";

  // The next minute: one more sample, whichever writer took it.
  now_ms += kHistoryMinuteMs;
  ASSERT_TRUE(another_round(first));
  ASSERT_TRUE(another_round(second));
  EXPECT_EQ(fields(HistoryGrain::Minute, "hist"), 2);
  EXPECT_EQ(field(HistoryGrain::Minute, "hist", minute + 1), "3 3 0 0");
  // Both minutes are in one day: its sample is the day's first.
  EXPECT_EQ(fields(HistoryGrain::Day, "hist"), 1);
  EXPECT_EQ(field(HistoryGrain::Day, "hist", kDay), "2 2 0 0");

  const std::vector<HistoryPoint> d =
      history_deltas(read_history(x, {"hist"}, HistoryGrain::Minute, minute, minute + 1).at(0));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].interval, minute);
  EXPECT_EQ(d[0].counts, (HistoryCounts{1, 1, 0, 0}));
}

TEST_F(HistoryWriterTest, RetriedAndDeadAreSampledToo) {
  QueueKeys q("failing");
  enqueue(x, q, mint_job_id(), "p");
  std::vector<ClaimedJob> got = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(fail(x, q, {got[0].id, got[0].lease_epoch}, {"again", 5, 0, false}), FailResult::Retry);
  got = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(fail(x, q, {got[0].id, got[0].lease_epoch}, {"bad", 5, 0, true}), FailResult::Dead);

  HistoryWriter w(params({"failing", "idle"}), server.options());
  w.start();
  ASSERT_TRUE(another_round(w));
  const std::int64_t minute = kStartMs / kHistoryMinuteMs;
  EXPECT_EQ(field(HistoryGrain::Minute, "failing", minute), "2 0 1 1");
  EXPECT_EQ(field(HistoryGrain::Minute, "idle", minute), "0 0 0 0") << "a queue with no counters yet starts at 0";
}

TEST_F(HistoryWriterTest, AKeyAnotherWriterBrokeStopsNoOtherQueuesHistory) {
  x.command({"SET", history_key("broken", HistoryGrain::Minute), "not a hash"});
  HistoryWriter w(params({"broken", "fine"}), server.options());
  w.start();
  ASSERT_TRUE(another_round(w));
  const std::int64_t minute = kStartMs / kHistoryMinuteMs;
  EXPECT_EQ(field(HistoryGrain::Minute, "fine", minute), "0 0 0 0");
  EXPECT_EQ(field(HistoryGrain::Day, "broken", kDay), "0 0 0 0") << "its day hash is whole";
  EXPECT_EQ(x.command({"GET", history_key("broken", HistoryGrain::Minute)}).str, "not a hash") << "left as it is";
  EXPECT_THROW(read_history(x, {"broken"}, HistoryGrain::Minute, minute, minute), Error);
}

TEST_F(HistoryWriterTest, WhatIsPastKeepingIsTrimmed) {
  const std::int64_t minute = kStartMs / kHistoryMinuteMs;
  const std::string mk = history_key("old", HistoryGrain::Minute);
  const std::string dk = history_key("old", HistoryGrain::Day);
  for (std::int64_t back : {2000, 1441, 1440, 5}) {
    x.command({"HSET", mk, std::to_string(minute - back), "1 1 0 0"});
  }
  for (std::int64_t back : {100, 91, 90, 1}) x.command({"HSET", dk, std::to_string(kDay - back), "1 1 0 0"});
  x.command({"HSET", dk, "not-a-day", "1 1 0 0"});

  HistoryWriter w(params({"old"}), server.options());
  w.start();
  ASSERT_TRUE(another_round(w));
  EXPECT_EQ(field(HistoryGrain::Minute, "old", minute - 2000), "(none)");
  EXPECT_EQ(field(HistoryGrain::Minute, "old", minute - 1441), "(none)");
  EXPECT_EQ(field(HistoryGrain::Minute, "old", minute - 1440), "1 1 0 0") << "a day of minutes is kept";
  EXPECT_EQ(fields(HistoryGrain::Minute, "old"), 3) << "1440 back, 5 back, and now";
  EXPECT_EQ(field(HistoryGrain::Day, "old", kDay - 91), "(none)");
  EXPECT_EQ(field(HistoryGrain::Day, "old", kDay - 90), "1 1 0 0") << "90 days are kept";
  EXPECT_EQ(fields(HistoryGrain::Day, "old"), 3) << "90 back, 1 back, and today; not-a-day went";

  // An hour later the sweep runs again: what aged past keeping meanwhile goes.
  now_ms += 60 * kHistoryMinuteMs;
  ASSERT_TRUE(another_round(w));
  EXPECT_EQ(field(HistoryGrain::Minute, "old", minute - 1440), "(none)");
}

// The figure docs/web.md gives: a queue's history when both hashes are
// full (1441 minutes, 91 days) with counters in the billions.
TEST_F(HistoryWriterTest, AFullHistoryCostsWhatTheDocsSay) {
  const std::vector<std::string> queues{"full"};
  const std::int64_t minute0 = kStartMs / kHistoryMinuteMs;
  std::vector<std::optional<HistoryCounts>> counts{HistoryCounts{4'000'000'000, 3'900'000'000, 90'000'000, 1'000'000}};
  for (std::int64_t d = 0; d <= kHistoryDaysKept; ++d) {
    write_history(x, queues, counts, kStartMs - d * kHistoryDayMs);
  }
  for (std::int64_t m = 0; m <= kHistoryMinutesKept; ++m) {
    counts[0]->claimed += 1000;
    counts[0]->completed += 990;
    write_history(x, queues, counts, (minute0 - m) * kHistoryMinuteMs);
  }
  trim_history(x, queues, kStartMs);
  ASSERT_EQ(fields(HistoryGrain::Minute, "full"), kHistoryMinutesKept + 1);
  ASSERT_EQ(fields(HistoryGrain::Day, "full"), kHistoryDaysKept + 1);
  const std::int64_t minutes = x.command({"MEMORY", "USAGE", history_key("full", HistoryGrain::Minute)}).integer;
  const std::int64_t days = x.command({"MEMORY", "USAGE", history_key("full", HistoryGrain::Day)}).integer;
  std::cout << "history of one queue: minutes " << minutes << " bytes, days " << days << " bytes, total "
            << minutes + days << " bytes\n";
  RecordProperty("history_bytes", std::to_string(minutes + days));
  EXPECT_LT(minutes + days, 160 * 1024) << "docs/web.md says a queue's history costs under 160 KiB";
}

}  // namespace
}  // namespace echomq::daemon
