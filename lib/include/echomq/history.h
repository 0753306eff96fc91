// A queue's history: its cumulative counters (stats.h) sampled once a
// minute and once a day into two hashes beside its keys, above the wire
// (docs/decisions.md, "History"): emq:{q}:history:minute and
// emq:{q}:history:day, field = the interval's number since the epoch (UTC),
// value = "claimed completed retried dead". emqd writes them (HSETNX: the
// first writer of an interval wins, a second is a no-op); `emq web` reads
// them. Per-interval counts are differences of consecutive samples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"

namespace echomq {

enum class HistoryGrain { Minute, Day };

inline constexpr std::int64_t kHistoryMinuteMs = 60'000;
inline constexpr std::int64_t kHistoryDayMs = 86'400'000;
// What is kept: a day of minutes, 90 days of days.
inline constexpr std::int64_t kHistoryMinutesKept = 24 * 60;
inline constexpr std::int64_t kHistoryDaysKept = 90;

std::int64_t history_interval_ms(HistoryGrain grain);
std::int64_t history_kept(HistoryGrain grain);
// emq:{q}:history:minute or emq:{q}:history:day, for a checked name.
std::string history_key(std::string_view queue, HistoryGrain grain);

// The four counters a sample holds (absent counters are 0).
struct HistoryCounts {
  std::int64_t claimed = 0;
  std::int64_t completed = 0;
  std::int64_t retried = 0;
  std::int64_t dead = 0;
  bool operator==(const HistoryCounts& o) const {
    return claimed == o.claimed && completed == o.completed && retried == o.retried && dead == o.dead;
  }
};

std::string history_value(const HistoryCounts& c);
// nullopt for anything but four non-negative integers separated by spaces.
std::optional<HistoryCounts> parse_history_value(std::string_view text);

// The counters of each queue now, one pipelined round trip (HMGET stats);
// nullopt for a queue whose counters another writer broke (not integers):
// no sample is better than a wrong one.
std::vector<std::optional<HistoryCounts>> read_counters(Executor& x, const std::vector<std::string>& queues);

// Writes each queue's counters as the sample of the minute and of the day
// that now_ms falls in, where there is none yet: one pipelined round trip.
// Returns how many samples were new (the rest were taken by another writer).
// A key another writer broke (not a hash) is named in `problems` and the
// others are written; without `problems` it throws Error naming the key.
int write_history(Executor& x, const std::vector<std::string>& queues,
                  const std::vector<std::optional<HistoryCounts>>& counts, std::int64_t now_ms,
                  std::vector<std::string>* problems = nullptr);

// Deletes the fields older than what is kept (as of now_ms) from both
// hashes of each queue; returns how many went. Broken keys as above.
std::int64_t trim_history(Executor& x, const std::vector<std::string>& queues, std::int64_t now_ms,
                          std::vector<std::string>* problems = nullptr);

// The samples of intervals first..last (numbers since the epoch) of each
// queue, one pipelined round trip; a missing or unreadable field is absent
// from its queue's map. A key that is not a hash throws Error naming it.
std::vector<std::map<std::int64_t, HistoryCounts>> read_history(Executor& x, const std::vector<std::string>& queues,
                                                                HistoryGrain grain, std::int64_t first,
                                                                std::int64_t last);

// One interval's counts: what happened from its sample to the next.
struct HistoryPoint {
  std::int64_t interval = 0;  // the interval's number since the epoch
  HistoryCounts counts;
};
// The difference of each pair of consecutive intervals' samples (n and
// n + 1 both present); a counter that went down (a reset) reads 0, and an
// interval without both samples is left out: a gap, not a zero.
std::vector<HistoryPoint> history_deltas(const std::map<std::int64_t, HistoryCounts>& samples);

}  // namespace echomq
