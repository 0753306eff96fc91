// Three daemons, sixteen slots each, on one queue of 20 000 no-op jobs:
// the claim is atomic on the server, so each job is leased by one daemon
// only and runs exactly once, and with healthy renewals no lease is lost.
#include <filesystem>
#include <memory>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class ManyDaemons : public Faults {};

TEST_F(ManyDaemons, ThreeDaemonsTimesSixteenRunEachOfTwentyThousandJobsExactlyOnce) {
  const int kDaemons = 3, kConcurrency = 16;
  const std::vector<std::string> names = {"a", "b", "c"};
  std::vector<int> ports;
  for (int i = 0; i < kDaemons; ++i) ports.push_back(free_loopback_port());
  auto head = [&](int i) {
    FaultSettings f;
    f.metrics_port = ports[i];
    return fault_config_head(server.url(), f);
  };

  // The ledger plugin when this emqd runs plugins: 20 000 jobs cost no
  // process each. Otherwise exec, whose process per job makes 20 000 jobs
  // take minutes on two cores: fewer then, and the figures say so.
  std::vector<std::unique_ptr<EmqdProcess>> daemons;
  std::string kind = "plugin";
  if (std::filesystem::exists(ledger_plugin())) {
    for (int i = 0; i < kDaemons; ++i) {
      auto d = start_ready(head(i) + plugin_ledger_queue("many", kConcurrency, ledger_path(), names[i]));
      if (!d) break;
      daemons.push_back(std::move(d));
    }
  }
  if (daemons.size() < static_cast<std::size_t>(kDaemons)) {
    kind = "exec";
    daemons.clear();
    for (int i = 0; i < kDaemons; ++i) {
      daemons.push_back(start_ready(head(i) + ledger_queue("many", kConcurrency, 30000, ledger_path(), names[i], ":")));
      ASSERT_TRUE(daemons.back()) << "exec must always run";
    }
  }
  const int kJobs = kind == "plugin" ? 20000 : 4000;

  const auto began = std::chrono::steady_clock::now();
  std::vector<std::string> ids = put_many("many", kJobs);
  ASSERT_TRUE(all_completed(x, "many", kJobs, seconds(300))) << daemons[0]->log();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  LedgerCounts c = expect_all_completed(x, "many", ids, ledger_path());
  EXPECT_EQ(c.lines, static_cast<std::size_t>(kJobs)) << c.rerun() << " jobs ran more than once";
  double claimed = 0, completed_here = 0, lost = 0;
  std::string share;
  for (int i = 0; i < kDaemons; ++i) {
    const std::string page = scrape(ports[i]);
    claimed += sample_of(page, "emq_jobs_claimed_total{queue=\"many\"}").value_or(-1);
    completed_here += sample_of(page, "emq_jobs_completed_total{queue=\"many\"}").value_or(-1);
    lost += sample_of(page, "emq_jobs_lease_lost_total{queue=\"many\"}").value_or(-1);
    share += (i ? "/" : "") + std::to_string(ledger_lines_of(ledger_path(), names[i]));
  }
  EXPECT_EQ(claimed, kJobs) << "the daemons together claimed each job once";
  EXPECT_EQ(completed_here, kJobs);
  EXPECT_EQ(lost, 0) << "no lease may be lost with healthy renewals";
  QueueStats s = stats_of("many");
  EXPECT_EQ(s.counters["reaped"], 0);
  EXPECT_EQ(s.counters["claimed"], kJobs);
  for (int i = 0; i < kDaemons; ++i) EXPECT_GT(ledger_lines_of(ledger_path(), names[i]), 0u) << names[i] << " idled";
  report_figures("3 daemons x 16 slots, one queue (" + kind + " handler)",
                 "jobs=" + std::to_string(kJobs) + " ran_twice=" + std::to_string(c.rerun()) + " bound=0 lease_lost=" +
                     std::to_string(int(lost)) + " per_daemon=" + share + " wall_s=" + std::to_string(took));
  for (auto& d : daemons) d->signal(SIGTERM);
  for (auto& d : daemons) EXPECT_EQ(d->wait_exit(seconds(15)), 0) << d->log();
}

}  // namespace
}  // namespace echomq::test
