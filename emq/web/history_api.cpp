#include "web/history_api.h"

#include <map>
#include <optional>
#include <vector>

#include "echomq/history.h"
#include "echomq/keyspace.h"
#include "echomq/stats.h"

namespace echomq::cli {

namespace {

struct Range {
  const char* name;
  HistoryGrain grain;
  std::int64_t intervals;
};
constexpr Range kRanges[] = {{"1h", HistoryGrain::Minute, 60},
                             {"24h", HistoryGrain::Minute, 24 * 60},
                             {"30d", HistoryGrain::Day, 30},
                             {"90d", HistoryGrain::Day, 90}};

std::optional<Range> range_of(const std::string& text) {
  for (const Range& r : kRanges) {
    if (text == r.name) return r;
  }
  return std::nullopt;
}

std::vector<std::string> queues_asked(Executor& x, const std::string& queue) {
  if (!queue.empty()) {
    check_queue_name(queue);
    return {queue};
  }
  std::vector<std::string> names;
  for (std::string& q : known_queues(x)) {
    if (valid_queue_name(q)) names.push_back(std::move(q));
  }
  return names;
}

void add(HistoryCounts& to, const HistoryCounts& c) {
  to.claimed += c.claimed;
  to.completed += c.completed;
  to.retried += c.retried;
  to.dead += c.dead;
}

}  // namespace

ApiAnswer history_answer(Executor& x, const std::string& queue, const std::string& range_text) {
  const std::optional<Range> range = range_of(range_text.empty() ? "24h" : range_text);
  if (!range) return api_error(400, "range '" + range_text.substr(0, 40) + "' is not one of 1h, 24h, 30d, 90d");
  const std::vector<std::string> queues = queues_asked(x, queue);
  const std::int64_t every = history_interval_ms(range->grain);
  const std::int64_t now = x.server_time_ms();
  const std::int64_t last = now / every;
  const std::int64_t first = last - range->intervals + 1;

  std::vector<std::map<std::int64_t, HistoryCounts>> samples = read_history(x, queues, range->grain, first, last);
  // The counters now close the interval under way, so today shows today.
  const std::vector<std::optional<HistoryCounts>> live = read_counters(x, queues);
  std::map<std::int64_t, HistoryCounts> sum;  // interval -> every queue's counts
  for (std::size_t q = 0; q < queues.size(); ++q) {
    if (live[q]) samples[q][last + 1] = *live[q];
    for (const HistoryPoint& p : history_deltas(samples[q])) add(sum[p.interval], p.counts);
  }

  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const auto& [interval, c] : sum) {
    points.push_back({{"t", interval * every},
                      {"claimed", c.claimed},
                      {"completed", c.completed},
                      {"failed", c.retried},
                      {"dead", c.dead}});
  }
  ApiAnswer a;
  a.body = {{"queue", queue.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(queue)},
            {"range", range->name},
            {"interval_ms", every},
            {"from_ms", first * every},
            {"to_ms", (last + 1) * every},
            {"now_ms", now},
            {"queues", queues.size()},
            {"points", std::move(points)}};
  return a;
}

}  // namespace echomq::cli
