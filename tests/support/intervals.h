// When each job's handler ran, as the handler itself records it: "s <ns>
// <job id>" as it starts and "e <ns> <job id>" as it ends, appended to a
// file (one short O_APPEND write each, so concurrent handlers never
// interleave). Tests compute from these what the daemons did: how many ran
// at once, and whether one job ran after others ended.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace echomq::test {

struct Interval {
  std::int64_t start = 0, end = 0;  // of the last run, in ns
  int runs = 0;                     // how many times it started
};

// Job id -> its interval.
inline std::map<std::string, Interval> read_intervals(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, Interval> by_job;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kind, job;
    std::int64_t ns = 0;
    words >> kind >> ns >> job;
    if (job.empty()) continue;
    Interval& i = by_job[job];
    if (kind == "s") {
      i.start = ns;
      ++i.runs;
    } else {
      i.end = ns;
    }
  }
  return by_job;
}

// An exec handler's command and env that records into `record` around
// `body` (a shell snippet; it sees the payload on stdin, and what it prints
// is the job's result).
inline std::string interval_handler_yaml(const std::string& record, const std::string& body) {
  return "      command: [\"/bin/sh\", \"-c\", \"echo \\\"s $(date +%s%N) $EMQ_JOB_ID\\\" >> \\\"$REC\\\"; " + body +
         "; echo \\\"e $(date +%s%N) $EMQ_JOB_ID\\\" >> \\\"$REC\\\"\"]\n      env: { REC: \"" + record + "\" }\n";
}

// The most jobs running at once, and the time-weighted mean while the
// first job ran until the last one started (work was pending throughout).
inline std::pair<int, double> overlap(const std::map<std::string, Interval>& jobs) {
  std::vector<std::pair<std::int64_t, int>> events;
  std::int64_t last_start = 0;
  for (const auto& [job, i] : jobs) {
    events.push_back({i.start, +1});
    events.push_back({i.end, -1});
    last_start = std::max(last_start, i.start);
  }
  if (events.empty()) return {0, 0};
  std::sort(events.begin(), events.end());  // at one instant, ends (-1) before starts
  int now = 0, most = 0;
  double weighted = 0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    now += events[k].second;
    most = std::max(most, now);
    if (k + 1 < events.size() && events[k + 1].first <= last_start) {
      weighted += static_cast<double>(now) * static_cast<double>(events[k + 1].first - events[k].first);
    }
  }
  const double span = static_cast<double>(last_start - events.front().first);
  return {most, span > 0 ? weighted / span : 0};
}

}  // namespace echomq::test
