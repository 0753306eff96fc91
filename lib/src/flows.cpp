#include "echomq/flows.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "script_replies.h"

namespace echomq {

namespace {
std::string num(std::int64_t v) { return std::to_string(v); }
}  // namespace

std::optional<std::pair<std::string, std::string>> parse_ref(std::string_view ref) {
  const std::size_t colon = ref.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view queue = ref.substr(0, colon);
  std::string_view id = ref.substr(colon + 1);
  if (!valid_queue_name(queue) || !passes_wire_gate(id)) return std::nullopt;
  return std::make_pair(std::string(queue), std::string(id));
}

const char* to_string(ChildOutcome o) { return o == ChildOutcome::Completed ? "completed" : "dead"; }

const char* to_string(ChildDoneResult r) {
  switch (r) {
    case ChildDoneResult::NotInDeps: return "not in deps";
    case ChildDoneResult::Recorded: return "recorded";
    case ChildDoneResult::Released: return "released";
    case ChildDoneResult::ParentDied: return "parent died";
    case ChildDoneResult::Waits: return "waits";
    case ChildDoneResult::ParentNotWaiting: return "parent not waiting";
  }
  return "?";
}

ScriptCall child_done_call(const QueueKeys& pq, std::string_view parent_id, std::string_view child_ref,
                           ChildOutcome outcome, std::string_view text) {
  return {Script::ChildDone,
          {pq.row(parent_id), pq.deps(parent_id), pq.results(parent_id), pq.waiting, pq.pending, pq.dead, pq.outbox},
          {std::string(child_ref), to_string(outcome), std::string(text)}};
}

ChildDoneResult decode_child_done(const Reply& r) {
  const std::int64_t n = integer_of(r, "child_done");
  if (n < 0 || n > 5) throw Error(ErrorKind::Protocol, "child_done", "replied " + num(n) + ", not 0..5");
  return static_cast<ChildDoneResult>(n);
}

ScriptCall outbox_ack_call(const QueueKeys& q, std::string_view id, std::int64_t keep_ms,
                           std::optional<std::int64_t> read_score) {
  ScriptCall call{Script::OutboxAck, {q.row(id), q.outbox}, {std::string(id), num(keep_ms)}};
  if (read_score) call.args.push_back(num(*read_score));
  return call;
}

bool decode_outbox_ack(const Reply& r) { return integer_of(r, "outbox_ack") == 1; }

Command results_read(const QueueKeys& q, std::string_view id) { return {"HGETALL", q.results(id)}; }

std::vector<ChildResult> decode_results(const Reply& r) {
  throw_if_error(r, "results");
  if (r.type != Reply::Type::Array || r.elements.size() % 2 != 0) {
    throw Error(ErrorKind::Protocol, "results", "expected a flat hash [ref, outcome, ...]");
  }
  std::vector<ChildResult> out;
  for (std::size_t i = 0; i < r.elements.size(); i += 2) {
    auto ref = parse_ref(r.elements[i].str);
    const std::string& v = r.elements[i + 1].str;
    // A field another writer put there is no child of ours.
    if (!ref || v.size() < 2 || (v[0] != 'c' && v[0] != 'd') || v[1] != ':') continue;
    out.push_back({std::move(ref->first), std::move(ref->second),
                   v[0] == 'c' ? ChildOutcome::Completed : ChildOutcome::Dead, v.substr(2)});
  }
  std::sort(out.begin(), out.end(), [](const ChildResult& a, const ChildResult& b) {
    return std::tie(a.queue, a.id) < std::tie(b.queue, b.id);
  });
  return out;
}

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
    if (!row.elements[5].is_nil()) v.children_enqueued = std::atoll(row.elements[5].str.c_str());
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
    child.queue = parsed->first;
    child.id = parsed->second;
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

FlowView read_flow(Executor& x, const QueueKeys& q, std::string_view id, int max_depth) {
  check_wire_gate(id);
  FlowView top;
  top.queue = q.queue;
  top.id = std::string(id);
  std::set<std::string> met{q.ref(id)};
  std::vector<FlowView*> level{&top};
  for (int depth = 0; !level.empty(); ++depth) {
    read_level(x, level);
    std::vector<FlowView*> next;
    for (FlowView* v : level) {
      for (FlowView& c : v->children) {
        if (!met.insert(c.queue + ":" + c.id).second) {
          c.cut = FlowCut::Repeat;
        } else if (depth >= max_depth) {
          c.cut = FlowCut::Depth;
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

  std::vector<FlowOrphan> all;
  std::vector<Command> looks;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    for (const Reply& ref : refs[i].elements) {
      auto child = parse_ref(ref.str);
      if (!child) continue;
      QueueKeys cq(child->first);
      all.push_back({parents[i], ref.str, ""});
      looks.push_back({"HGET", cq.row(child->second), "state"});
      looks.push_back({"ZSCORE", cq.outbox, child->second});
      looks.push_back({"HEXISTS", q.results(parents[i]), ref.str});
    }
  }
  if (all.empty()) return {};
  std::vector<Reply> seen = x.pipeline(looks);
  std::vector<FlowOrphan> suspects;
  std::vector<Command> still;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Reply& state = seen[3 * k];  // a row another writer broke is not judged here
    if (state.is_error()) continue;
    const bool in_outbox = seen[3 * k + 1].type == Reply::Type::String;
    const bool recorded = seen[3 * k + 2].type == Reply::Type::Integer && seen[3 * k + 2].integer == 1;
    if (state.is_nil()) {
      all[k].reason = "its row is gone";
    } else if (state.str == "completed" && !in_outbox) {
      all[k].reason = "it completed without its outbox entry (settled by a speaker that knows nothing of flows)";
    } else if (state.str == "dead" && !in_outbox && !recorded) {
      all[k].reason = "it died without its outbox entry (settled by a speaker that knows nothing of flows)";
    } else {
      continue;
    }
    still.push_back({"SISMEMBER", q.deps(all[k].parent), all[k].child});
    suspects.push_back(std::move(all[k]));
  }
  if (suspects.empty()) return {};
  std::vector<Reply> member = x.pipeline(still);
  std::vector<FlowOrphan> out;
  for (std::size_t k = 0; k < suspects.size(); ++k) {
    if (member[k].type == Reply::Type::Integer && member[k].integer == 1) out.push_back(std::move(suspects[k]));
  }
  return out;
}

}  // namespace echomq
