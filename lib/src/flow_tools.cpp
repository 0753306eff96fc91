// What a tool reads of flows (flow_tools.h): a tree as it stands, and the
// parents no child can release any more.
#include "echomq/flow_tools.h"

#include <algorithm>
#include <map>
#include <set>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "echomq/whole_number.h"
#include "script_replies.h"

namespace echomq {

namespace {
// Fills v from its row, deps and results, as read by read_level.
void fill_view(FlowView& v, const Reply& row, const Reply& deps, const Reply& results) {
  throw_if_error(row, "flow show");
  throw_if_error(deps, "flow show");
  if (row.type == Reply::Type::Array && row.elements.size() == 6 && !row.elements[0].is_nil()) {
    v.found = true;
    v.state = row.elements[0].str;
    if (!row.elements[1].is_nil()) v.result = row.elements[1].str;
    if (!row.elements[2].is_nil()) v.error = row.elements[2].str;
    v.parent = row.elements[3].str;
    v.on_child_failure = row.elements[4].str;
    if (!row.elements[5].is_nil()) v.children_enqueued = whole_number(row.elements[5].str).value_or(0);
  }
  std::map<std::string, ChildResult> recorded;  // by ref
  for (ChildResult& c : decode_results(results)) recorded.emplace(c.queue + ":" + c.id, std::move(c));
  std::set<std::string> awaited;
  for (const Reply& e : deps.elements) awaited.insert(e.str);
  std::set<std::string> refs = awaited;
  for (const auto& [ref, c] : recorded) refs.insert(ref);
  for (const std::string& ref : refs) {
    auto parsed = parse_ref(ref);
    if (!parsed) continue;
    FlowView child;
    child.queue = parsed->queue;
    child.id = parsed->id;
    auto mine = recorded.find(ref);
    v.children.push_back(std::move(child));
    v.recorded.push_back(mine == recorded.end() ? std::nullopt : std::optional<ChildResult>(mine->second));
    v.awaited.push_back(awaited.count(ref) > 0);
  }
}

// One round trip for every view of a level: its row, deps and results.
void read_level(Executor& x, const std::vector<FlowView*>& level) {
  std::vector<Command> reads;
  for (const FlowView* v : level) {
    QueueKeys q(v->queue);
    reads.push_back({"HMGET", q.row(v->id), "state", "result", "error", "parent", "on_child_failure", "children"});
    reads.push_back({"SMEMBERS", q.deps(v->id)});
    reads.push_back(results_read(q, v->id));
  }
  std::vector<Reply> r = x.pipeline(reads);
  for (std::size_t i = 0; i < level.size(); ++i) fill_view(*level[i], r[3 * i], r[3 * i + 1], r[3 * i + 2]);
}
}  // namespace

FlowView read_flow(Executor& x, const QueueKeys& q, std::string_view id, int max_depth, std::size_t max_nodes) {
  check_wire_gate(id);
  FlowView top;
  top.queue = q.queue;
  top.id = std::string(id);
  std::set<std::string> met{q.ref(id)};
  std::vector<FlowView*> level{&top};
  std::size_t read = 0;
  for (int depth = 0; !level.empty(); ++depth) {
    read_level(x, level);
    read += level.size();
    std::vector<FlowView*> next;
    for (FlowView* v : level) {
      for (FlowView& c : v->children) {
        if (!met.insert(c.queue + ":" + c.id).second) {
          c.cut = FlowCut::Repeat;
        } else if (depth >= max_depth) {
          c.cut = FlowCut::Depth;
        } else if (read + next.size() >= max_nodes) {
          c.cut = FlowCut::Nodes;
        } else {
          next.push_back(&c);
        }
      }
    }
    level = std::move(next);
  }
  return top;
}

}  // namespace echomq

namespace echomq {

std::vector<FlowOrphan> find_orphans(Executor& x, const QueueKeys& q, const std::vector<std::string>& parents) {
  if (parents.empty()) return {};
  std::vector<Command> deps;
  for (const std::string& p : parents) deps.push_back({"SMEMBERS", q.deps(p)});
  std::vector<Reply> refs = x.pipeline(deps);

  // Each child's state first: only a finished child (or a missing row) can
  // make an orphan, and most children of a waiting parent are still on
  // their way. Reading the outbox and results for those too cost the
  // server three reads a child every round (measured: a third of the
  // server's extra work per flow job in bench/run's flows row).
  std::vector<FlowOrphan> all;
  std::vector<std::string> outboxes;  // each child's queue's outbox and its id
  std::vector<std::string> ids;
  std::vector<Command> states;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    for (const Reply& ref : refs[i].elements) {
      auto child = parse_ref(ref.str);
      if (!child) continue;
      QueueKeys cq(child->queue);
      all.push_back({parents[i], ref.str, ""});
      states.push_back({"HGET", cq.row(child->id), "state"});
      outboxes.push_back(cq.outbox);
      ids.push_back(child->id);
    }
  }
  if (all.empty()) return {};
  std::vector<Reply> state = x.pipeline(states);
  std::vector<std::size_t> finished;
  std::vector<Command> looks;
  std::vector<std::size_t> suspects;  // into all
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (state[k].is_error()) continue;  // a row another writer broke is not judged here
    if (state[k].is_nil()) {
      all[k].reason = "its row is gone";
      suspects.push_back(k);
    } else if (state[k].str == "completed" || state[k].str == "dead") {
      finished.push_back(k);
      looks.push_back({"ZSCORE", outboxes[k], ids[k]});
      looks.push_back({"HEXISTS", q.results(all[k].parent), all[k].child});
    }
  }
  if (!looks.empty()) {
    std::vector<Reply> seen = x.pipeline(looks);
    for (std::size_t f = 0; f < finished.size(); ++f) {
      const std::size_t k = finished[f];
      FlowOrphan& o = all[k];
      const bool in_outbox = seen[2 * f].type == Reply::Type::String;
      const bool recorded = seen[2 * f + 1].type == Reply::Type::Integer && seen[2 * f + 1].integer == 1;
      if (state[k].str == "completed" && !in_outbox) {
        o.reason = "it completed without its outbox entry (settled by a speaker that knows nothing of flows)";
      } else if (state[k].str == "dead" && !in_outbox && !recorded) {
        o.reason = "it died without its outbox entry (settled by a speaker that knows nothing of flows)";
      } else {
        continue;
      }
      suspects.push_back(k);
    }
  }
  if (suspects.empty()) return {};
  std::sort(suspects.begin(), suspects.end());  // in the parents' order, as before
  std::vector<Command> still;
  for (std::size_t k : suspects) still.push_back({"SISMEMBER", q.deps(all[k].parent), all[k].child});
  std::vector<Reply> member = x.pipeline(still);
  std::vector<FlowOrphan> out;
  for (std::size_t j = 0; j < suspects.size(); ++j) {
    if (member[j].type == Reply::Type::Integer && member[j].integer == 1) out.push_back(std::move(all[suspects[j]]));
  }
  return out;
}

}  // namespace echomq
