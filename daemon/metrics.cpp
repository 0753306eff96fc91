#include "metrics.h"

#include <prometheus/text_serializer.h>

#include <stdexcept>

namespace echomq::daemon {

namespace {
using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// 1 ms to 1 h, roughly x2.5 apart: job handlers span that whole range.
const prometheus::Histogram::BucketBoundaries kDurationBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};

// One family: every metric below is registered by name and help alone.
prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const char* name, const char* help) {
  return BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const char* name, const char* help) {
  return BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Histogram>& histogram(prometheus::Registry& r, const char* name, const char* help) {
  return BuildHistogram().Name(name).Help(help).Register(r);
}
}  // namespace

Metrics::Metrics(const std::vector<std::string>& queues, const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  auto& claimed = counter(r, "emq_jobs_claimed_total", "Jobs claimed by this daemon.");
  auto& completed = counter(r, "emq_jobs_completed_total", "Jobs completed by this daemon.");
  auto& failed = counter(r, "emq_jobs_failed_total", "Failed attempts, by what became of the job.");
  auto& lost = counter(r, "emq_jobs_lease_lost_total", "Jobs whose lease was lost before their outcome could count.");
  auto& reaped = counter(r, "emq_jobs_reaped_total", "Jobs with an expired lease recovered by this daemon's reaper.");
  auto& released = counter(r, "emq_jobs_released_total", "Running jobs given back at shutdown.");
  auto& in_flight = gauge(r, "emq_jobs_in_flight", "Jobs this daemon is running now.");
  auto& duration = histogram(r, "emq_handler_duration_seconds", "Time a handler took for one job.");
  auto& depth =
      gauge(r, "emq_queue_jobs", "Jobs in each set of the queue, read from the server (same from every daemon).");
  auto& latency = gauge(r, "emq_queue_latency_seconds", "Age of the job a claim would take next, from its minted id.");
  auto& wait = histogram(r, "emq_job_wait_seconds", "Time from mint to claim, for minted ids.");
  auto& concurrency = gauge(r, "emq_queue_concurrency", "Handler slots configured for the queue.");
  auto& restarts =
      counter(r, "emq_handler_restarts_total", "Handler processes replaced after they died or were recycled.");

  auto& handler_up = gauge(r, "emq_handler_up",
                           "1 while the queue's handler can take jobs; 0 while it cannot start and the queue "
                           "claims nothing.");

  auto& limited = counter(r, "emq_queue_limited_total",
                          "Claims cut short by the queue's limits while jobs waited, by the limit: max_active or "
                          "rate.");
  auto& children_done = counter(r, "emq_flow_children_done_total",
                                "Children of the queue whose parent this daemon told, by outcome (each once).");
  auto& orphans = gauge(r, "emq_flow_orphans",
                        "Parents of the queue waiting on a child whose row is gone, or that finished untold.");
  auto& paused =
      gauge(r, "emq_queue_paused", "1 while the queue is paused, read from the server (same from every daemon).");
  auto& duplicates = counter(r, "emq_unique_duplicates_total",
                             "Unique enqueues, by any producer, refused because their key was held (replaces "
                             "not counted), from the queue's stats (the same from every daemon).");

  auto& groups = gauge(r, "emq_groups",
                       "Groups of the queue holding keys (jobs pending or running), read from the server (same "
                       "from every daemon).");
  group_jobs_ = &gauge(r, "emq_group_jobs",
                       "Jobs of a group of the queue, by state (pending, active), for the 10 groups with the "
                       "largest backlogs only, read from the server (same from every daemon).");

  for (const std::string& q : queues) {
    QueueMetrics m;
    m.groups = &groups.Add({{"queue", q}});
    m.limited_max_active = &limited.Add({{"queue", q}, {"by", "max_active"}});
    m.limited_rate = &limited.Add({{"queue", q}, {"by", "rate"}});
    m.claimed = &claimed.Add({{"queue", q}});
    m.completed = &completed.Add({{"queue", q}});
    m.failed_retry = &failed.Add({{"queue", q}, {"outcome", "retry"}});
    m.failed_dead = &failed.Add({{"queue", q}, {"outcome", "dead"}});
    m.lease_lost = &lost.Add({{"queue", q}});
    m.reaped_requeued = &reaped.Add({{"queue", q}, {"outcome", "requeued"}});
    m.reaped_dead = &reaped.Add({{"queue", q}, {"outcome", "dead"}});
    m.released = &released.Add({{"queue", q}});
    m.handler_restarts = &restarts.Add({{"queue", q}});
    m.handler_up = &handler_up.Add({{"queue", q}});
    m.handler_up->Set(1);
    m.in_flight = &in_flight.Add({{"queue", q}});
    m.concurrency = &concurrency.Add({{"queue", q}});
    m.latency = &latency.Add({{"queue", q}});
    m.pending = &depth.Add({{"queue", q}, {"state", "pending"}});
    m.active = &depth.Add({{"queue", q}, {"state", "active"}});
    m.delayed = &depth.Add({{"queue", q}, {"state", "delayed"}});
    m.dead = &depth.Add({{"queue", q}, {"state", "dead"}});
    m.paused = &paused.Add({{"queue", q}});
    m.unique_duplicates = &duplicates.Add({{"queue", q}});
    m.handler_duration = &duration.Add({{"queue", q}}, kDurationBuckets);
    m.job_wait = &wait.Add({{"queue", q}}, kDurationBuckets);
    m.children_done_completed = &children_done.Add({{"queue", q}, {"outcome", "completed"}});
    m.children_done_dead = &children_done.Add({{"queue", q}, {"outcome", "dead"}});
    m.flow_orphans = &orphans.Add({{"queue", q}});
    queues_.emplace(q, m);
  }

  valkey_up_ = &gauge(r, "emq_valkey_up", "1 while the server answers, else 0.").Add({});
  node_up_ = &gauge(r, "emq_valkey_node_up", "On a cluster: 1 while the primary answers, else 0 (the node missing).");
  script_loads_ = &counter(r, "emq_valkey_script_loads_total",
                           "SCRIPT LOAD calls: at every connect, and after the server lost its script cache.")
                       .Add({});
  errors_ = &counter(r, "emq_valkey_errors_total", "Failed server calls, by kind.");
  schedule_fires_ = &counter(r, "emq_schedule_fires_total",
                             "enqueue_cron calls for a due tick, by outcome: enqueued, already (another daemon "
                             "fired it), skipped (overlap: skip while the last fire's job is unfinished), held "
                             "(its unique key held by a live job).");
  schedule_missed_ = &counter(r, "emq_schedule_missed_total",
                              "Ticks never fired: older than misfire_grace when this daemon came to them.");
  schedule_next_ =
      &gauge(r, "emq_schedule_next_fire_timestamp_seconds", "When the schedule fires next, by the server's clock.");
  events_written_ = &counter(r, "emq_events_written_total",
                             "Entries this daemon's transitions appended to the queue's events stream (a claim's "
                             "promotions of delayed jobs not among them).");
  for (auto& [q, m] : queues_) m.events_written = &events_written_->Add({{"queue", q}});
  gauge(r, "emq_build_info", "The emqd version; always 1.").Add({{"version", version}}).Set(1);
  auto& state = gauge(r, "emq_daemon_state", "1 for this daemon's state in the fleet registry, 0 for the others.");
  for (const char* s : {"running", "quiet", "stopping"}) daemon_state_[s] = &state.Add({{"state", s}});
  set_daemon_state("running");
  daemons_ = &gauge(r, "emq_daemons", "Live daemons in {emq}:daemons, as this one sees them at its beat.").Add({});
  daemons_stopped_beating_ = &gauge(r, "emq_daemons_stopped_beating",
                                    "Daemons that stopped beating without leaving within the last hour (killed, "
                                    "crashed, or cut off), as this one sees them at its beat.")
                                  .Add({});
  auto& dropped = counter(r, "emq_trace_spans_dropped_total",
                          "Job spans never sent, by reason: queue_full (the export queue was full: the collector "
                          "is slow or down), export_failed (the collector did not take them).");
  spans_dropped_queue_full_ = &dropped.Add({{"reason", "queue_full"}});
  spans_dropped_export_failed_ = &dropped.Add({{"reason", "export_failed"}});
}

void Metrics::set_daemon_state(const std::string& state) {
  for (auto& [name, g] : daemon_state_) g->Set(name == state ? 1 : 0);
}

void Metrics::set_groups(const std::string& queue, std::int64_t groups, const std::vector<GroupCount>& top) {
  auto& series = group_series_[queue];
  std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>> kept;
  for (std::size_t i = 0; i < top.size() && i < kGroupSeries; ++i) {
    const GroupCount& g = top[i];
    auto it = series.find(g.group);
    std::pair<prometheus::Gauge*, prometheus::Gauge*> s;
    if (it != series.end()) {
      s = it->second;
      series.erase(it);
    } else {
      s = {&group_jobs_->Add({{"queue", queue}, {"group", g.group}, {"state", "pending"}}),
           &group_jobs_->Add({{"queue", queue}, {"group", g.group}, {"state", "active"}})};
    }
    s.first->Set(static_cast<double>(g.pending));
    s.second->Set(static_cast<double>(g.active));
    kept.emplace(g.group, s);
  }
  for (auto& [name, s] : series) {
    group_jobs_->Remove(s.first);
    group_jobs_->Remove(s.second);
  }
  series = std::move(kept);
  // Last: a scrape that sees the new count sees the series that go with it.
  if (auto q = queues_.find(queue); q != queues_.end()) q->second.groups->Set(static_cast<double>(groups));
}

void Metrics::set_daemons(std::int64_t live, std::int64_t stopped_beating) {
  daemons_->Set(static_cast<double>(live));
  daemons_stopped_beating_->Set(static_cast<double>(stopped_beating));
}

QueueMetrics& Metrics::queue(const std::string& name) {
  auto it = queues_.find(name);
  if (it == queues_.end()) throw std::logic_error("no metrics for queue " + name);
  return it->second;
}

ScheduleMetrics Metrics::schedule(const std::string& queue, const std::string& name) {
  ScheduleMetrics m;
  m.enqueued = &schedule_fires_->Add({{"queue", queue}, {"schedule", name}, {"outcome", "enqueued"}});
  m.already = &schedule_fires_->Add({{"queue", queue}, {"schedule", name}, {"outcome", "already"}});
  m.skipped = &schedule_fires_->Add({{"queue", queue}, {"schedule", name}, {"outcome", "skipped"}});
  m.held = &schedule_fires_->Add({{"queue", queue}, {"schedule", name}, {"outcome", "held"}});
  m.missed = &schedule_missed_->Add({{"queue", queue}, {"schedule", name}});
  m.next_fire = &schedule_next_->Add({{"queue", queue}, {"schedule", name}});
  return m;
}

void Metrics::set_valkey_up(bool up) { valkey_up_->Set(up ? 1 : 0); }

void Metrics::set_valkey_node_up(const std::string& node, bool up) { node_up_->Add({{"node", node}}).Set(up ? 1 : 0); }

void Metrics::on_script_loads(int count) { script_loads_->Increment(count); }

void Metrics::on_error(ErrorKind kind) {
  // Family::Add returns the existing child for known labels; it locks, but
  // errors are rare.
  errors_->Add({{"kind", to_string(kind)}}).Increment();
}

void Metrics::on_events_written(std::string_view queue, std::int64_t entries) {
  const std::string name(queue);
  auto it = queues_.find(name);
  prometheus::Counter& c = it != queues_.end() ? *it->second.events_written : events_written_->Add({{"queue", name}});
  c.Increment(static_cast<double>(entries));
}

std::string Metrics::scrape() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect());
}

}  // namespace echomq::daemon
