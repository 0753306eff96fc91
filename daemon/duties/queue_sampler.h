// The queue sampler: every interval, the depths and head job of every
// configured queue in one pipelined round trip, into emq_queue_jobs{state}
// and emq_queue_latency_seconds. Sampled on a timer rather than per scrape
// so that many scrapers (or a fast one) cost the server nothing more, and
// never per job. Its round trip doubles as the "does the server answer"
// probe of /healthz, and its write (the queues' registration) puts the
// queues back after a FLUSHALL and finds a server that refuses writes: it
// runs whether or not metrics are served. It also reads each queue's limits,
// so it is the daemon's watch on them: a change is told to whoever asked
// (claim loops held back by the old limits), within a second, with no
// call of its own and whether or not the server publishes keyspace events.
// Each queue's groups are read in the same sample (lib's read_groups, the
// largest kGroupSeries backlogs), into emq_groups and emq_group_jobs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/groups.h"
#include "echomq/keyspace.h"
#include "echomq/stats.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

class QueueSampler : public Periodic {
 public:
  struct Params {
    std::vector<std::string> queues;
    std::chrono::milliseconds interval{1000};
  };

  QueueSampler(Params params, const ConnectionOptions& server, Metrics& metrics, ReconnectPolicy reconnect = {});
  ~QueueSampler() override;

  // Whether the last sample came back within `within` of now: false before
  // the first, after a failed one, and while one hangs past `within`.
  bool server_answered(std::chrono::milliseconds within) const;
  // "" while the server answers (as above) and takes writes; else one line
  // saying which: what /healthz and emq_valkey_up both answer from.
  std::string trouble(std::chrono::milliseconds within) const;
  // Called on the sampler's thread with a queue's name when its limits
  // read otherwise than at the sample before ("none" to a rate, a rate
  // to another, broken to mended).
  void on_limits_change(std::function<void(const std::string& queue)> tell);

 protected:
  std::chrono::milliseconds tick() override;

 private:
  struct Sample {
    std::vector<QueueStats> stats;
    std::vector<GroupsView> groups;  // per queue, in keys_' order
    std::int64_t server_now_ms = 0;
  };
  void sample(Sample& s);
  bool read_state(Sample& s);
  void set_group_metrics(const std::vector<GroupsView>& groups);
  // On a cluster: which primary answers, into emq_valkey_node_up and trouble().
  void note_nodes();
  // Tells on_limits_change's callback of the queues whose limits changed.
  void note_limits(const std::vector<QueueStats>& all);

  Params params_;
  std::vector<QueueKeys> keys_;
  Executor executor_;
  Metrics& metrics_;
  // steady_clock ticks of the last good sample; 0: none since the last failure.
  std::atomic<std::int64_t> answered_at_{0};
  bool down_ = false;                               // tick() only: log an outage once, when it starts
  std::string problems_;                            // tick() only: what could not be read, logged on change
  std::map<std::string, std::string> limits_;       // tick() only: each queue's limits at the last sample
  std::map<std::string, std::int64_t> duplicates_;  // tick() only: each queue's stats duplicates counted so far
  mutable std::mutex mutex_;
  std::string refused_;  // the server's word for refusing writes; "" while it takes them
  std::string missing_;  // the cluster node that does not answer; "" when none
  std::function<void(const std::string&)> tell_limits_;
};

}  // namespace echomq::daemon
