// search_jobs, find_job_by_id and the bulk actions on what they find: the
// scan is bounded and says so, stops at the limit, matches bytes as bytes,
// and a job that moved between the search and the action is left alone.
#include "echomq/bulk_actions.h"
#include "echomq/search.h"
#include "echomq/stats.h"
#include "seed_jobs.h"
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Search : public WireTest {
 protected:
  static std::vector<std::string> found_ids(const SearchResult& r) {
    std::vector<std::string> out;
    for (const JobSummary& j : r.jobs) out.push_back(j.id);
    return out;
  }
};

TEST_F(Search, ScanStopsAtItsBoundAndSaysHowManyItReadOfHowMany) {
  // Every tenth payload holds the word; 1,200 rows span three pages.
  seed_pending(x, q, numbered_ids(1200, "s"), [](std::size_t i) { return i % 10 == 0 ? "order 4711" : "order 17"; });
  SearchArgs a;
  a.payload_contains = "4711";
  a.scan = 700;
  a.limit = 1000;
  SearchResult r = search_jobs(x, q, a);
  EXPECT_EQ(r.total, 1200);
  EXPECT_EQ(r.scanned, 700) << "the scan bound, not the set, ends it";
  EXPECT_FALSE(r.limit_reached);
  EXPECT_EQ(r.jobs.size(), 70u);
  EXPECT_EQ(r.jobs.front().id, "JOB_s100000");
  EXPECT_EQ(r.jobs.back().id, "JOB_s100690");
  EXPECT_TRUE(r.jobs.front().row_found);
  EXPECT_EQ(r.jobs.front().payload_head, "order 4711");

  a.scan = 5000;
  r = search_jobs(x, q, a);
  EXPECT_EQ(r.scanned, 1200) << "a set shorter than the bound is read to its end";
  EXPECT_EQ(r.jobs.size(), 120u);
}

TEST_F(Search, StopsAtTheLimitCountingOnlyTheRowsItRead) {
  seed_pending(x, q, numbered_ids(1000, "l"), [](std::size_t i) { return i % 10 == 0 ? "hit" : "miss"; });
  SearchArgs a;
  a.payload_contains = "hit";
  a.limit = 5;
  const SearchResult r = search_jobs(x, q, a);
  EXPECT_TRUE(r.limit_reached);
  EXPECT_EQ(found_ids(r),
            (std::vector<std::string>{"JOB_l100000", "JOB_l100010", "JOB_l100020", "JOB_l100030", "JOB_l100040"}));
  EXPECT_EQ(r.scanned, 41) << "up to and including the fifth match";
}

TEST_F(Search, ErrorAndIdPrefixAndPayloadAllMustMatch) {
  seed_dead(
      x, q, numbered_ids(30, "e"), [](std::size_t i) { return "tenant " + std::to_string(i % 3); },
      [](std::size_t i) { return i % 2 == 0 ? "connect timeout" : "bad input"; });
  SearchArgs a;
  a.state = JobState::Dead;
  a.error_contains = "timeout";
  EXPECT_EQ(search_jobs(x, q, a).jobs.size(), 15u);
  a.payload_contains = "tenant 0";
  EXPECT_EQ(search_jobs(x, q, a).jobs.size(), 5u) << "i even and i % 3 == 0";
  a.id_prefix = "JOB_e10000";
  EXPECT_EQ(found_ids(search_jobs(x, q, a)), (std::vector<std::string>{"JOB_e100006", "JOB_e100000"}))
      << "dead, newest death first";
  SearchArgs any;
  any.state = JobState::Dead;
  any.any_contains = "tenant 1";
  EXPECT_EQ(search_jobs(x, q, any).jobs.size(), 10u) << "the payload or the error";
  any.any_contains = "Timeout";
  EXPECT_TRUE(search_jobs(x, q, any).jobs.empty()) << "case-sensitive";
}

TEST_F(Search, FailedOnlyKeepsTheRetriesAmongDelayedJobs) {
  const std::int64_t later = x.server_time_ms() + 3600000;
  ASSERT_EQ(enqueue(x, q, "JOB_scheduled", "p", {0, later}), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x, q, "JOB_retry", "p"), EnqueueResult::Enqueued);
  const std::vector<ClaimedJob> got = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(fail(x, q, {got[0].id, got[0].lease_epoch}, {"timeout", 5, 3600000, false}), FailResult::Retry);
  SearchArgs a;
  a.state = JobState::Delayed;
  a.failed_only = true;
  const SearchResult r = search_jobs(x, q, a);
  EXPECT_EQ(found_ids(r), (std::vector<std::string>{"JOB_retry"}));
  EXPECT_EQ(r.scanned, 2);
  EXPECT_EQ(r.jobs[0].failures, 1);
  a.error_contains = "nothing like it";
  EXPECT_TRUE(search_jobs(x, q, a).jobs.empty()) << "with a text, both must hold";
}

TEST_F(Search, HostileBytesAreMatchedAsBytes) {
  const std::string nul_payload = std::string("a\0b<script>\xff", 12);
  std::string id = enqueue_new(nul_payload);
  enqueue_new("plain");
  SearchArgs a;
  a.payload_contains = std::string("\0b<script>\xff", 11);
  SearchResult r = search_jobs(x, q, a);
  ASSERT_EQ(found_ids(r), (std::vector<std::string>{id}));
  EXPECT_FALSE(r.jobs[0].payload_utf8);
  EXPECT_EQ(r.jobs[0].payload_bytes, 12);
  a.payload_contains = "\xff\xfe";
  EXPECT_TRUE(search_jobs(x, q, a).jobs.empty());
}

TEST_F(Search, RejectsBoundsThatReadNothing) {
  SearchArgs a;
  a.scan = 0;
  EXPECT_THROW(search_jobs(x, q, a), Error);
  a.scan = 10;
  a.limit = 0;
  EXPECT_THROW(search_jobs(x, q, a), Error);
}

TEST_F(Search, FindsAnIdInEveryKnownQueueAndNoneElse) {
  const QueueKeys other(q.queue + ".other");
  const QueueKeys unknown(q.queue + ".unknown");
  ASSERT_EQ(enqueue(x, q, "JOB_shared", "in q"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x, other, "JOB_shared", "in other"), EnqueueResult::Enqueued);
  ASSERT_EQ(enqueue(x, unknown, "JOB_shared", "not registered"), EnqueueResult::Enqueued);
  register_queues(x, {q.queue, other.queue});
  x.command({"SREM", std::string(kQueuesKey), unknown.queue});
  std::vector<FoundJob> found = find_job_by_id(x, "JOB_shared");
  ASSERT_EQ(found.size(), 2u);
  for (const FoundJob& f : found) {
    EXPECT_TRUE(f.queue == q.queue || f.queue == other.queue) << f.queue;
    EXPECT_EQ(f.job.state, "pending");
  }
  EXPECT_TRUE(find_job_by_id(x, "JOB_nowhere").empty());
  EXPECT_THROW(find_job_by_id(x, "not-a-job"), Error);
}

TEST_F(Search, BulkRetryLeavesAJobThatChangedStateAloneAndCountsIt) {
  seed_dead(
      x, q, numbered_ids(250, "b"), [](std::size_t) { return "p"; },
      [](std::size_t i) { return i < 200 ? "timeout" : "other"; });
  SearchArgs a;
  a.state = JobState::Dead;
  a.any_contains = "timeout";
  a.limit = a.scan;
  std::vector<std::string> found = found_ids(search_jobs(x, q, a));
  ASSERT_EQ(found.size(), 200u);
  ASSERT_EQ(retry_job(x, q, found[7]), RetryJobResult::Moved);  // someone else, in between
  const BulkResult r = retry_found(x, q, found);
  EXPECT_EQ(r.done, 199);
  EXPECT_EQ(r.changed, 1);
  EXPECT_EQ(count_jobs(x, q, JobState::Dead), 50);
  EXPECT_EQ(count_jobs(x, q, JobState::Pending), 200);
}

TEST_F(Search, BulkCancelLeavesAClaimedJobAloneAndCountsIt) {
  seed_pending(x, q, numbered_ids(150, "c"), [](std::size_t i) { return i < 120 ? "report" : "keep"; });
  SearchArgs a;
  a.any_contains = "report";
  a.limit = a.scan;
  std::vector<std::string> found = found_ids(search_jobs(x, q, a));
  ASSERT_EQ(found.size(), 120u);
  ASSERT_EQ(claim(x, q, {30000, 1, 0}).size(), 1u);  // the head: a match, now running
  const BulkResult r = cancel_found(x, q, JobState::Pending, found);
  EXPECT_EQ(r.done, 119);
  EXPECT_EQ(r.changed, 1);
  EXPECT_EQ(count_jobs(x, q, JobState::Pending), 30);
  EXPECT_EQ(count_jobs(x, q, JobState::Active), 1);
  EXPECT_THROW(cancel_found(x, q, JobState::Active, found), Error);
}

}  // namespace
}  // namespace echomq::test
