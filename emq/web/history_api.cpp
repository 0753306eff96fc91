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

nlohmann::ordered_json point_json(std::int64_t interval, std::int64_t every, const HistoryCounts& c) {
  return {{"t", interval * every},
          {"claimed", c.claimed},
          {"completed", c.completed},
          {"failed", c.retried},
          {"dead", c.dead}};
}

// Each queue's counts per interval of first..last, the interval now under
// way (last) closed by the counters as they stand, so today shows today.
std::vector<std::vector<HistoryPoint>> points_of(Executor& x, const std::vector<std::string>& queues,
                                                 HistoryGrain grain, std::int64_t first, std::int64_t last) {
  std::vector<std::map<std::int64_t, HistoryCounts>> samples = read_history(x, queues, grain, first, last);
  const std::vector<std::optional<HistoryCounts>> live = read_counters(x, queues);
  std::vector<std::vector<HistoryPoint>> out;
  for (std::size_t q = 0; q < queues.size(); ++q) {
    if (live[q]) samples[q][last + 1] = *live[q];
    out.push_back(history_deltas(samples[q]));
  }
  return out;
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

  std::map<std::int64_t, HistoryCounts> sum;  // interval -> every queue's counts
  for (const std::vector<HistoryPoint>& points : points_of(x, queues, range->grain, first, last)) {
    for (const HistoryPoint& p : points) add(sum[p.interval], p.counts);
  }
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const auto& [interval, c] : sum) points.push_back(point_json(interval, every, c));
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

ApiAnswer recent_history_answer(Executor& x) {
  const std::vector<std::string> queues = queues_asked(x, "");
  const std::int64_t now = x.server_time_ms();
  const std::int64_t last = now / kHistoryMinuteMs;
  const std::int64_t first = last - kRecentMinutes + 1;
  const std::vector<std::vector<HistoryPoint>> per_queue = points_of(x, queues, HistoryGrain::Minute, first, last);
  nlohmann::ordered_json by_queue = nlohmann::ordered_json::object();
  for (std::size_t q = 0; q < queues.size(); ++q) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const HistoryPoint& p : per_queue[q]) points.push_back(point_json(p.interval, kHistoryMinuteMs, p.counts));
    by_queue[queues[q]] = std::move(points);
  }
  ApiAnswer a;
  a.body = {{"interval_ms", kHistoryMinuteMs},
            {"from_ms", first * kHistoryMinuteMs},
            {"to_ms", (last + 1) * kHistoryMinuteMs},
            {"now_ms", now},
            {"queues", std::move(by_queue)}};
  return a;
}

}  // namespace echomq::cli
