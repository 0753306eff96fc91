// Every emq_* metric family of DESIGN.md, kept in one prometheus-cpp
// registry. Hot paths hold a QueueMetrics of plain pointers, so counting a
// job is an atomic add, not a map lookup.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "echomq/executor.h"

namespace echomq::daemon {

struct QueueMetrics {
  prometheus::Counter* claimed = nullptr;
  prometheus::Counter* completed = nullptr;
  prometheus::Counter* failed_retry = nullptr;
  prometheus::Counter* failed_dead = nullptr;
  prometheus::Counter* lease_lost = nullptr;
  prometheus::Counter* reaped_requeued = nullptr;
  prometheus::Counter* reaped_dead = nullptr;
  prometheus::Counter* released = nullptr;
  prometheus::Counter* handler_restarts = nullptr;
  prometheus::Counter* limited_max_active = nullptr;  // emq_queue_limited_total{by=...}
  prometheus::Counter* limited_rate = nullptr;
  prometheus::Gauge* handler_up = nullptr;
  prometheus::Gauge* in_flight = nullptr;
  prometheus::Gauge* concurrency = nullptr;
  prometheus::Gauge* latency = nullptr;
  prometheus::Gauge* pending = nullptr;
  prometheus::Gauge* active = nullptr;
  prometheus::Gauge* delayed = nullptr;
  prometheus::Gauge* dead = nullptr;
  prometheus::Gauge* paused = nullptr;  // emq_queue_paused
  // The queue's stats duplicates, as the sampler reads it: unique enqueues
  // by any producer that found their key held.
  prometheus::Counter* unique_duplicates = nullptr;
  prometheus::Histogram* handler_duration = nullptr;
  prometheus::Histogram* job_wait = nullptr;
  // Flows: children of this queue whose parent was told, by outcome; and
  // parents of this queue waiting on a child whose row is gone.
  prometheus::Counter* children_done_completed = nullptr;
  prometheus::Counter* children_done_dead = nullptr;
  prometheus::Gauge* flow_orphans = nullptr;
  prometheus::Counter* events_written = nullptr;
  prometheus::Gauge* groups = nullptr;  // emq_groups: the queue's groups holding keys
};

// emq_group_jobs has series for this many groups of a queue at most, the
// largest backlogs: a queue of 100,000 tenants must not make 200,000 series.
constexpr std::size_t kGroupSeries = 10;

// One group's counts, as the queue sampler reads them.
struct GroupCount {
  std::string group;
  std::int64_t pending = 0;
  std::int64_t active = 0;
};

// One schedule's series (the scheduler's only).
struct ScheduleMetrics {
  prometheus::Counter* enqueued = nullptr;
  prometheus::Counter* already = nullptr;
  prometheus::Counter* skipped = nullptr;
  prometheus::Counter* held = nullptr;  // its unique key held by a live job
  prometheus::Counter* missed = nullptr;
  prometheus::Gauge* next_fire = nullptr;  // epoch seconds
};

class Metrics : public ExecutorObserver {
 public:
  Metrics(const std::vector<std::string>& queues, const std::string& version);

  QueueMetrics& queue(const std::string& name);
  // Made on first use: a schedule's queue need not be one of the daemon's.
  ScheduleMetrics schedule(const std::string& queue, const std::string& name);
  void set_valkey_up(bool up);
  // On a cluster, per primary: emq_valkey_node_up{node="host:port"}.
  void set_valkey_node_up(const std::string& node, bool up);
  // The fleet: this daemon's state (emq_daemon_state{state}: 1 for it, 0
  // for the others), and the daemons it sees live and stopped beating.
  void set_daemon_state(const std::string& state);
  void set_daemons(std::int64_t live, std::int64_t stopped_beating);
  // emq_groups{queue} and emq_group_jobs{queue,group,state} for `top` (at
  // most kGroupSeries, the largest backlogs): the series of a group no
  // longer among them go. The sampler's thread alone calls it.
  void set_groups(const std::string& queue, std::int64_t groups, const std::vector<GroupCount>& top);

  void on_script_loads(int count) override;
  void on_error(ErrorKind kind) override;
  // emq_events_written_total{queue}: any queue, a parent's of another
  // daemon's too (Family::Add finds or makes its series).
  void on_events_written(std::string_view queue, std::int64_t entries) override;

  // emq_trace_spans_dropped_total{reason}: spans that found the export
  // queue full, and spans the collector did not take.
  prometheus::Counter& spans_dropped_queue_full() { return *spans_dropped_queue_full_; }
  prometheus::Counter& spans_dropped_export_failed() { return *spans_dropped_export_failed_; }

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // The text exposition format of everything, for /metrics.
  std::string scrape() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string, QueueMetrics> queues_;
  prometheus::Gauge* valkey_up_ = nullptr;
  prometheus::Family<prometheus::Gauge>* node_up_ = nullptr;
  prometheus::Counter* script_loads_ = nullptr;
  prometheus::Family<prometheus::Counter>* errors_ = nullptr;
  prometheus::Family<prometheus::Counter>* schedule_fires_ = nullptr;
  prometheus::Family<prometheus::Counter>* schedule_missed_ = nullptr;
  prometheus::Family<prometheus::Gauge>* schedule_next_ = nullptr;
  prometheus::Family<prometheus::Counter>* events_written_ = nullptr;
  prometheus::Family<prometheus::Gauge>* group_jobs_ = nullptr;
  // Per queue, per group: its pending and active series now exposed.
  std::map<std::string, std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>>> group_series_;
  std::map<std::string, prometheus::Gauge*> daemon_state_;  // by state
  prometheus::Gauge* daemons_ = nullptr;
  prometheus::Gauge* daemons_stopped_beating_ = nullptr;
  prometheus::Counter* spans_dropped_queue_full_ = nullptr;
  prometheus::Counter* spans_dropped_export_failed_ = nullptr;
};

}  // namespace echomq::daemon
