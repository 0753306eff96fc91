// A million no-op jobs through one daemon (the example no-op plugin: no
// process per job), watched from /proc: resident memory stays flat and no
// descriptor leaks. Long, so it runs only on request:
//
//   make soak     (or: EMQ_SOAK=1 ctest --test-dir build -L soak --output-on-failure)
//
// EMQ_SOAK_JOBS overrides the count (for a quicker look).
#include <cstdlib>
#include <filesystem>

#include "../faults/fault_fixture.h"

namespace echomq::test {
namespace {

class Soak : public Faults {};

TEST_F(Soak, AMillionNoopJobsThroughOneDaemonKeepMemoryAndDescriptorsFlat) {
  if (std::getenv("EMQ_SOAK") == nullptr) GTEST_SKIP() << "long: run with EMQ_SOAK=1 ctest -L soak";
  if (!std::filesystem::exists(noop_plugin())) GTEST_SKIP() << noop_plugin() << " is not built";
  const char* jobs_env = std::getenv("EMQ_SOAK_JOBS");
  const std::int64_t kJobs = jobs_env ? std::atoll(jobs_env) : 1000000;
  const std::int64_t kAhead = 50000;  // pending kept this deep: the server's memory is not the subject

  const std::unique_ptr<EmqdProcess> d =
      start_ready(fault_config_head(server.url(), {}) + "  - name: soak\n    concurrency: 8\n    lease_ms: 1500\n" +
                  "    handler:\n      type: plugin\n      path: " + noop_plugin() + "\n");
  if (!d) GTEST_SKIP() << "this emqd does not run plugin handlers yet";
  const pid_t pid = d->pid();
  // The baseline is the daemon idle after a first batch: every connection
  // it opens lazily is open by then (the renewer's, once it has had leases
  // to extend: every 500 ms here), and no job holds a stop token.
  const std::int64_t kFirst = 20000;
  put_many("soak", static_cast<int>(kFirst));
  ASSERT_TRUE(all_completed(x, "soak", kFirst, seconds(120))) << d->log();
  std::this_thread::sleep_for(milliseconds(2000));  // idle, as at the end
  const int fds_start = open_fds(pid);
  const std::string fd_list_start = fd_targets(pid);

  std::int64_t enqueued = kFirst;
  long rss_warm = -1, rss_peak = 0;
  int fds_warm = -1;  // mid-run: one stop token per running job on top
  const auto began = std::chrono::steady_clock::now();
  while (true) {
    QueueStats s = stats_of("soak");
    const std::int64_t done = s.counters["completed"];
    if (done >= kJobs) break;
    rss_peak = std::max(rss_peak, rss_kib(pid));
    if (rss_warm < 0 && done >= kAhead) {
      rss_warm = rss_kib(pid);
      fds_warm = open_fds(pid);
    }
    if (enqueued < kJobs && s.pending < kAhead) {
      const int n = static_cast<int>(std::min<std::int64_t>(10000, kJobs - enqueued));
      put_many("soak", n);
      enqueued += n;
    } else {
      std::this_thread::sleep_for(milliseconds(50));  // a sampling period, not a wait for a condition
    }
    ASSERT_TRUE(d->running()) << d->log();
    ASSERT_LT(std::chrono::steady_clock::now() - began, std::chrono::minutes(60)) << "stuck at " << done;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_TRUE(all_completed(x, "soak", kJobs, seconds(30)));
  // Idle again: what is left resident is what the daemon kept.
  std::this_thread::sleep_for(milliseconds(2000));
  const long rss_end = rss_kib(pid);
  const int fds_end = open_fds(pid);

  QueueStats s = stats_of("soak");
  EXPECT_EQ(s.counters["completed"], kJobs);
  EXPECT_EQ(s.counters["claimed"], kJobs) << "each job claimed once";
  EXPECT_EQ(s.counters["reaped"], 0);
  EXPECT_EQ(s.dead, 0);
  EXPECT_EQ(fds_end, fds_start) << "descriptors leaked:\nidle after the first batch:\n"
                                << fd_list_start << "at the end:\n"
                                << fd_targets(pid);
  EXPECT_LT(rss_end - rss_warm, 16 * 1024) << "resident memory grew by " << (rss_end - rss_warm) << " KiB";
  EXPECT_LT(rss_peak - rss_warm, 16 * 1024) << "resident memory peaked " << (rss_peak - rss_warm) << " KiB higher";
  report_figures("soak: " + std::to_string(kJobs) + " no-op plugin jobs, one daemon x 8",
                 "VmRSS warm=" + std::to_string(rss_warm) + " KiB end=" + std::to_string(rss_end) +
                     " KiB peak=" + std::to_string(rss_peak) + " KiB; fds start=" + std::to_string(fds_start) +
                     " warm=" + std::to_string(fds_warm) + " end=" + std::to_string(fds_end) + "; " +
                     std::to_string(static_cast<long long>(kJobs / took)) + " jobs/s over " +
                     std::to_string(static_cast<long long>(took)) + " s");
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(15)), 0) << d->log();
}

}  // namespace
}  // namespace echomq::test
