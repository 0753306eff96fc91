#include "duties/flow_orphans.h"

#include <spdlog/spdlog.h>

#include "echomq/flow_tools.h"

namespace echomq::daemon {

namespace {
constexpr std::chrono::seconds kEvery{2};
// The oldest waiting parents looked at per queue and round: an orphan is
// old by nature, and a round must stay a small read.
constexpr int kParentsPerRound = 1000;
}  // namespace

FlowOrphans::FlowOrphans(const Config& config, const ConnectionOptions& server, Metrics& metrics,
                         ReconnectPolicy reconnect)
    : Periodic("flow orphans"), config_(config), executor_(server, std::move(reconnect), &metrics), metrics_(metrics) {
  for (const QueueConfig& q : config.queues) keys_.emplace_back(q.name);
}

FlowOrphans::~FlowOrphans() {
  request_stop();
  join();
}

// One round trip for the oldest waiting parents of every queue.
std::chrono::milliseconds FlowOrphans::tick() {
  if (keys_.empty()) return kEvery;
  std::vector<Command> oldest;
  for (const QueueKeys& q : keys_) oldest.push_back({"ZRANGE", q.waiting, "0", std::to_string(kParentsPerRound - 1)});
  const std::vector<Reply> parents = executor_.pipeline(oldest);
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::set<std::string> orphaned = scan(keys_[i], parents[i]);
    metrics_.queue(config_.queues[i].name).flow_orphans->Set(static_cast<double>(orphaned.size()));
  }
  return kEvery;
}

// lib's test of each parent read (flows.h).
std::set<std::string> FlowOrphans::scan(const QueueKeys& q, const Reply& parents) {
  if (parents.is_error()) throw error_from_reply("flow orphans", parents.str);
  std::vector<std::string> ids;
  for (const Reply& p : parents.elements) ids.push_back(p.str);
  std::set<std::string> orphaned = rowless(q, ids);
  for (const FlowOrphan& o : find_orphans(executor_, q, ids)) {
    orphaned.insert(o.parent);
    if (reported_.insert(q.ref(o.parent) + " " + o.child).second) {
      spdlog::warn(
          "queue={} job={} is an orphan: it waits on child {}, and {}; nothing will release it. "
          "Re-enqueue the child with its id and parent, or cancel the parent: emq cancel {} {} "
          "(docs/operations.md, \"Flow orphans\")",
          q.queue, o.parent, o.child, o.reason, q.queue, o.parent);
    }
  }
  return orphaned;
}

// One round trip: per id, its row (EXISTS), then whether it is still in
// waiting. In that order, a parent released and deleted between the
// ZRANGE and these reads is not taken for one whose row was deleted.
std::set<std::string> FlowOrphans::rowless(const QueueKeys& q, const std::vector<std::string>& ids) {
  std::set<std::string> out;
  if (ids.empty()) return out;
  std::vector<Command> looks;
  for (const std::string& id : ids) {
    looks.push_back({"EXISTS", q.row(id)});
    looks.push_back({"ZSCORE", q.waiting, id});
  }
  const std::vector<Reply> seen = executor_.pipeline(looks);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const Reply &row = seen[2 * k], &waits = seen[2 * k + 1];
    if (row.type != Reply::Type::Integer || row.integer != 0 || waits.type != Reply::Type::String) continue;
    out.insert(ids[k]);
    if (reported_.insert(q.ref(ids[k]) + " (no row)").second) {
      spdlog::warn(
          "queue={} job={} is in the waiting set but its row is gone (deleted by hand?): nothing will ever run it. "
          "Remove what is left of it with: emq cancel {} {}",
          q.queue, ids[k], q.queue, ids[k]);
    }
  }
  return out;
}

}  // namespace echomq::daemon
