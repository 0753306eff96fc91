#include "daemon_view.h"

#include <algorithm>

namespace echomq::cli {

using json = nlohmann::ordered_json;

json daemon_json(const DaemonInfo& d, std::int64_t now_ms, bool with_jobs) {
  const std::optional<std::int64_t> every = d.beat_every_ms(now_ms);
  json o = {{"id", d.id},
            {"host", d.host},
            {"pid", d.pid},
            {"version", d.version},
            {"state", d.state},
            {"queues", d.queues},
            {"slots", d.slots},
            {"busy", d.busy},
            {"prefetched", d.prefetched},
            {"executor", d.executor},
            {"started_ms", d.started_ms},
            {"beat_ms", d.beat_ms},
            {"beat_every_ms", every ? json(*every) : json(nullptr)},
            {"ack", d.ack ? json{{"signal", d.ack->signal}, {"at_ms", d.ack->at_ms}} : json(nullptr)}};
  if (with_jobs) {
    json jobs = json::array();
    for (const DaemonJob& j : d.jobs) {
      jobs.push_back({{"queue", j.queue},
                      {"id", j.id},
                      {"attempt", j.attempt},
                      {"started_ms", j.started_ms},
                      {"progress", j.progress ? json(*j.progress) : json(nullptr)},
                      {"prefetched", j.prefetched}});
    }
    o["jobs"] = std::move(jobs);
  }
  if (!d.problems.empty()) o["problems"] = d.problems;
  return o;
}

std::int64_t served_by(const Fleet& fleet, const std::string& queue) {
  return std::count_if(fleet.daemons.begin(), fleet.daemons.end(), [&](const DaemonInfo& d) {
    return std::find(d.queues.begin(), d.queues.end(), queue) != d.queues.end();
  });
}

}  // namespace echomq::cli
