#include "flow_orphans.h"

#include <spdlog/spdlog.h>

#include "echomq/flows.h"

namespace echomq::daemon {

namespace {
constexpr std::chrono::seconds kEvery{2};
// The oldest waiting parents looked at per queue and round: an orphan is
// old by nature, and a round must stay a small read.
constexpr int kParentsPerRound = 1000;

struct Candidate {
  std::string parent;  // id, in the scanned queue
  std::string child;   // ref
};
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

std::chrono::milliseconds FlowOrphans::tick() {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::set<std::string> orphaned = scan(keys_[i]);
    metrics_.queue(config_.queues[i].name).flow_orphans->Set(static_cast<double>(orphaned.size()));
  }
  return kEvery;
}

// Four reads, each one round trip: the waiting parents, their deps, each
// child's state and outbox entry (and the parent's record of it), and,
// for those that look orphaned, whether the ref is still in deps (a child
// told and acknowledged between the reads is no orphan).
std::set<std::string> FlowOrphans::scan(const QueueKeys& q) {
  Reply parents = executor_.command({"ZRANGE", q.waiting, "0", std::to_string(kParentsPerRound - 1)});
  if (parents.is_error()) throw error_from_reply("flow orphans", parents.str);
  if (parents.elements.empty()) return {};
  std::vector<Command> deps;
  for (const Reply& p : parents.elements) deps.push_back({"SMEMBERS", q.deps(p.str)});
  std::vector<Reply> refs = executor_.pipeline(deps);

  std::vector<Candidate> all;
  std::vector<Command> looks;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    for (const Reply& ref : refs[i].elements) {
      auto child = parse_ref(ref.str);
      if (!child) continue;
      QueueKeys cq(child->first);
      all.push_back({parents.elements[i].str, ref.str});
      looks.push_back({"HGET", cq.row(child->second), "state"});
      looks.push_back({"ZSCORE", cq.outbox, child->second});
      looks.push_back({"HEXISTS", q.results(parents.elements[i].str), ref.str});
    }
  }
  if (all.empty()) return {};
  std::vector<Reply> seen = executor_.pipeline(looks);
  std::vector<Candidate> suspects;
  std::vector<std::string> why;
  std::vector<Command> still;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Reply& state = seen[3 * k];
    const bool in_outbox = seen[3 * k + 1].type == Reply::Type::String;
    const bool recorded = seen[3 * k + 2].type == Reply::Type::Integer && seen[3 * k + 2].integer == 1;
    std::string reason;
    if (state.is_nil()) {
      reason = "its row is gone";
    } else if (state.str == "completed" && !in_outbox) {
      reason = "it completed without its outbox entry (settled by a speaker that knows nothing of flows)";
    } else if (state.str == "dead" && !in_outbox && !recorded) {
      reason = "it died without its outbox entry (settled by a speaker that knows nothing of flows)";
    }
    if (reason.empty()) continue;
    suspects.push_back(all[k]);
    why.push_back(reason);
    still.push_back({"SISMEMBER", q.deps(all[k].parent), all[k].child});
  }
  std::set<std::string> orphaned;
  if (suspects.empty()) return orphaned;
  std::vector<Reply> member = executor_.pipeline(still);
  for (std::size_t k = 0; k < suspects.size(); ++k) {
    if (member[k].type != Reply::Type::Integer || member[k].integer != 1) continue;
    orphaned.insert(suspects[k].parent);
    const std::string parent_ref = q.ref(suspects[k].parent);
    if (reported_.insert(parent_ref + " " + suspects[k].child).second) {
      spdlog::warn("queue={} job={} is an orphan: it waits on child {}, and {}; nothing will release it. "
                   "Re-enqueue the child with its id and parent, or cancel the parent (docs/operations.md, "
                   "\"Flow orphans\")",
                   q.queue, suspects[k].parent, suspects[k].child, why[k]);
    }
  }
  return orphaned;
}

}  // namespace echomq::daemon
