// The ledger of a schedule's fires, for end-to-end tests: what the daemons'
// logs say they fired ("fired the tick at <ms> ms as <id>", one line per
// enqueue_cron that enqueued) checked against the rows in the queue.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace echomq::test {

// Tick (epoch ms) -> job id, for every fire a daemon's log reports.
inline std::multimap<std::int64_t, std::string> fires_logged(const std::string& log) {
  std::multimap<std::int64_t, std::string> out;
  std::regex fired("fired the tick at ([0-9]+) ms as ([^ \n]+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), fired); it != std::sregex_iterator(); ++it)
    out.emplace(std::stoll((*it)[1].str()), (*it)[2].str());
  return out;
}

// Every row is one tick's job and back, the ticks 1 s apart with no gap.
inline void expect_one_job_per_tick(const std::map<std::int64_t, std::string>& fires,
                                    const std::set<std::string>& rows) {
  ASSERT_FALSE(fires.empty());
  std::set<std::string> ids;
  for (const auto& [tick, id] : fires) ids.insert(id);
  EXPECT_EQ(ids.size(), fires.size()) << "one job answered two ticks";
  EXPECT_EQ(ids, rows) << "rows and fires differ";
  std::int64_t previous = fires.begin()->first - 1000;
  for (const auto& [tick, id] : fires) {
    EXPECT_EQ(tick % 1000, 0) << tick;
    EXPECT_EQ(tick - previous, 1000) << "a gap or a stray tick before " << tick;
    previous = tick;
  }
}

// The fires of several daemons' logs as one ledger; a tick fired twice fails.
inline std::map<std::int64_t, std::string> one_fire_per_tick(const std::vector<std::string>& logs) {
  std::multimap<std::int64_t, std::string> all;
  for (const std::string& log : logs) all.merge(fires_logged(log));
  std::map<std::int64_t, std::string> out;
  for (const auto& [tick, id] : all) {
    EXPECT_EQ(all.count(tick), 1u) << "the tick at " << tick << " fired more than once";
    out.emplace(tick, id);
  }
  return out;
}

}  // namespace echomq::test
