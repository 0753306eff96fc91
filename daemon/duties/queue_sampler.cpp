#include "duties/queue_sampler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "echomq/job_id.h"
#include "echomq/stats.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;

// "READONLY", "MISCONF", "NOREPLICAS": the server's own word for a refusal.
std::string code_of(const Error& e) {
  std::string text = e.what();
  if (!e.op().empty() && text.rfind(e.op() + ": ", 0) == 0) text.erase(0, e.op().size() + 2);
  return text.substr(0, text.find(' '));
}
}  // namespace

QueueSampler::QueueSampler(Params params, const ConnectionOptions& server, Metrics& metrics, ReconnectPolicy reconnect)
    : Periodic("queue sampler"),
      params_(std::move(params)),
      executor_(server, std::move(reconnect), &metrics),
      metrics_(metrics) {
  for (const std::string& q : params_.queues) keys_.emplace_back(q);
}

QueueSampler::~QueueSampler() {
  request_stop();
  join();
}

bool QueueSampler::server_answered(std::chrono::milliseconds within) const {
  const std::int64_t at = answered_at_.load();
  if (at == 0) return false;
  return Clock::now() - Clock::time_point(Clock::duration(at)) <= within;
}

std::string QueueSampler::trouble(std::chrono::milliseconds within) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!server_answered(within)) {
    return missing_.empty() ? "the server does not answer"
                            : "the server does not answer: cluster node " + missing_ + " is missing";
  }
  if (!refused_.empty()) return "the server refuses writes (" + refused_ + ")";
  return "";
}

// The reads, then the registration of the queues in {emq}:queues: a write,
// so it also finds a server that answers but refuses writes (a replica, a
// full disk), and it puts the names back after a FLUSHALL. SADD of members
// already there changes nothing and is not replicated.
void QueueSampler::sample(Sample& s) {
  s.stats = stats(executor_, keys_);
  // The stats say which queues hold groups: only those are read again,
  // two round trips each, never one per group. Only groups holding keys
  // have series: one that drains loses its series, as operations.md says.
  s.groups.assign(keys_.size(), GroupsView{});
  for (std::size_t i = 0; i < keys_.size() && i < s.stats.size(); ++i) {
    if (s.stats[i].groups > 0) s.groups[i] = read_groups(executor_, keys_[i], kGroupSeries, IdleGroups::Left);
  }
  // Ages by the server's clock, which every daemon shares: a daemon on a
  // host whose clock is off reports the same latency as the others.
  s.server_now_ms = executor_.server_time_ms();
  std::string refused;
  try {
    register_queues(executor_, params_.queues);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::ReadOnly) throw;
    refused = code_of(e);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (refused != refused_) {
    if (refused.empty()) {
      spdlog::info("queue sampler: the server takes writes again");
    } else {
      spdlog::warn(
          "queue sampler: the server refuses writes ({}): no job can be claimed or settled until it takes "
          "them again",
          refused);
    }
  }
  refused_ = std::move(refused);
}

void QueueSampler::on_limits_change(std::function<void(const std::string& queue)> tell) {
  std::lock_guard<std::mutex> lock(mutex_);
  tell_limits_ = std::move(tell);
}

void QueueSampler::note_limits(const std::vector<QueueStats>& all) {
  std::vector<std::string> changed;
  for (const QueueStats& s : all) {
    auto [it, first] = limits_.try_emplace(s.queue, s.limits);
    if (!first && it->second != s.limits) changed.push_back(s.queue);
    it->second = s.limits;
  }
  std::function<void(const std::string&)> tell;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tell = tell_limits_;
  }
  if (!tell) return;
  for (const std::string& q : changed) tell(q);
}

void QueueSampler::note_nodes() {
  const std::string lost = executor_.lost_node();
  if (const SlotMap* map = executor_.cluster_map()) {
    for (const NodeAddress& n : map->primaries()) metrics_.set_valkey_node_up(n.name(), n.name() != lost);
    if (!lost.empty()) metrics_.set_valkey_node_up(lost, false);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  missing_ = lost;
}

// One sample, books kept on failure; false when there is nothing to use.
bool QueueSampler::read_state(Sample& s) {
  try {
    try {
      sample(s);
    } catch (const Error& e) {
      // One dropped connection is no outage: the executor reconnects at
      // once after a broken call, so try again now before saying so.
      if (!e.transient() || executor_.connected() || executor_.retry_after().count() > 0) throw;
      sample(s);
    }
  } catch (const Error& e) {
    if (!e.transient()) {
      // The server answered, with something this sampler cannot read:
      // say what, once per new text, and do not call it an outage.
      if (e.what() != problems_) spdlog::warn("queue sampler: cannot read the queues' state: {}", e.what());
      problems_ = e.what();
      answered_at_ = Clock::now().time_since_epoch().count();
      return false;
    }
    // An outage is logged once, when it starts, not at every sample.
    if (!down_) spdlog::warn("queue sampler: the server does not answer: {}", e.what());
    down_ = true;
    answered_at_ = 0;
    metrics_.set_valkey_up(false);
    return false;
  }
  if (down_) spdlog::info("queue sampler: the server answers again");
  down_ = false;
  answered_at_ = Clock::now().time_since_epoch().count();
  return true;
}

std::chrono::milliseconds QueueSampler::tick() {
  Sample sampled_now;
  const bool sampled = read_state(sampled_now);
  const std::vector<QueueStats>& all = sampled_now.stats;
  const std::int64_t server_now_ms = sampled_now.server_now_ms;
  note_nodes();
  if (!sampled) return params_.interval;
  // The endpoint sets the gauge again at each scrape from trouble(), the
  // same answer; this keeps it right for a sampler used on its own.
  metrics_.set_valkey_up(trouble(params_.interval * 2).empty());

  std::string problems;
  for (const QueueStats& s : all) {
    for (const std::string& p : s.problems) problems += (problems.empty() ? "" : "; ") + p;
  }
  // Fields a peer broke are named when they appear and when they mend, not
  // every second; the rest of the sample is used as usual.
  if (problems != problems_) {
    if (problems.empty()) {
      spdlog::info("queue sampler: the queues' state reads cleanly again");
    } else {
      spdlog::warn("queue sampler: another writer broke {}; the other fields are sampled", problems);
    }
  }
  problems_ = problems;
  note_limits(all);
  for (const QueueStats& s : all) {
    QueueMetrics& m = metrics_.queue(s.queue);
    m.pending->Set(static_cast<double>(s.pending));
    m.active->Set(static_cast<double>(s.active));
    m.delayed->Set(static_cast<double>(s.delayed));
    m.dead->Set(static_cast<double>(s.dead));
    m.paused->Set(s.paused ? 1 : 0);
    // The server's counter, followed: what it gained since the last sample
    // (all of it at the first), never back when an operator resets it.
    const auto d = s.counters.find("duplicates");
    std::int64_t& counted = duplicates_[s.queue];
    if (d != s.counters.end() && d->second > counted)
      m.unique_duplicates->Increment(static_cast<double>(d->second - counted));
    if (d != s.counters.end()) counted = d->second;
    double age_s = 0;  // empty, or a head id that is not minted and so cannot be dated
    if (s.head_pending) {
      if (auto minted = minted_at_ms(*s.head_pending)) {
        age_s = std::max<double>(0, static_cast<double>(server_now_ms - static_cast<std::int64_t>(*minted))) / 1e3;
      }
    }
    m.latency->Set(age_s);
  }
  set_group_metrics(sampled_now.groups);
  return params_.interval;
}

void QueueSampler::set_group_metrics(const std::vector<GroupsView>& groups) {
  for (std::size_t i = 0; i < groups.size() && i < keys_.size(); ++i) {
    std::vector<GroupCount> top;
    for (const GroupState& g : groups[i].top) top.push_back({g.name, g.pending, g.active});
    metrics_.set_groups(keys_[i].queue, groups[i].groups, top);
  }
}

}  // namespace echomq::daemon
