// Flows in the differential run: trees of parents and children in the
// run's queue, settled with complete_flow and fail_flow (EMQ.COMPLETE_FLOW
// and EMQ.FAIL_FLOW on the native side) and told with the scripts either
// executor runs (children_done and outbox_ack_many, or child_done and
// outbox_ack), so that the twins meet every row a flow leaves: a child
// with parent, a parent with children (and its deps and results), a
// middle parent with both, and rows, outboxes, deps and results broken by
// some other writer. What is drawn is drawn here; the fixture runs it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/flow_batches.h"
#include "echomq/flows.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "differential_groups.h"

namespace echomq::test {

class FlowDraws {
 public:
  FlowDraws(std::mt19937_64& rng, const QueueKeys& q, std::function<std::string()> new_id)
      : rng_(rng), q_(q), new_id_(std::move(new_id)) {}

  // A tree: a parent with one to three children, each a leaf or, now and
  // then, a middle parent with leaves of its own; parents before their
  // children, as enqueue_flow sends them. Now and then a child is left
  // out (its parent waits on it) or points at a parent that never was.
  std::vector<ScriptCall> enqueue_tree(std::vector<std::string>& ids) {
    std::vector<ScriptCall> parents, leaves;
    tree(new_id_(), "", 1 + pick(2), 0, parents, leaves);
    if (chance(10)) leaves.push_back(child_call(new_id_(), q_.ref(new_id_())));  // a parent that never was
    for (ScriptCall& c : leaves) parents.push_back(std::move(c));
    for (const ScriptCall& c : parents) {
      ids.push_back(c.args[0]);
      flow_ids_.push_back(c.args[0]);
    }
    return parents;
  }

  // Complete and fail take their flow form this often: the flow form on a
  // plain job is the plain one, and a flow-unaware speaker settles a child
  // with the plain form.
  FlowMode settle_mode() { return chance(65) ? FlowMode::Flow : FlowMode::Plain; }

  // A flow job settled by the lease that holds it (as the scripted side
  // holds it before the step): a child, a parent or a middle parent,
  // completed or failed in the flow form, so that every branch of the twins
  // runs, not only their lease-lost reply. None when no flow job is held.
  std::optional<ScriptCall> settle_held(Connection& scripted, const std::vector<Lease>& leases,
                                        const std::string& text) {
    std::vector<Command> reads;
    for (const Lease& l : leases)
      reads.push_back({"HMGET", q_.row(l.id), "state", "lease_epoch", "parent", "children"});
    std::vector<Reply> rows = reads.empty() ? std::vector<Reply>{} : scripted.pipeline(reads);
    std::vector<std::pair<Lease, bool>> held;  // and whether it is a parent
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Reply& f = rows[i];
      if (f.type != Reply::Type::Array || f.elements[0].str != "active" ||
          f.elements[1].str != std::to_string(leases[i].epoch)) {
        continue;
      }
      const bool parent = f.elements[3].type == Reply::Type::String;
      if (parent || f.elements[2].type == Reply::Type::String) held.emplace_back(leases[i], parent);
    }
    if (held.empty()) return std::nullopt;
    const auto& [lease, parent] = held[pick(static_cast<int>(held.size()))];
    ++(parent ? held_parents_ : held_children_);
    if (chance(65)) return complete_call(q_, lease, chance(50) ? 0 : keep_ms_, text, FlowMode::Flow);
    const FailArgs a{text, 1 + pick(3), chance(50) ? 0 : (chance(50) ? 1 : keep_ms_), chance(20)};
    return fail_call(q_, lease, a, FlowMode::Flow);
  }

  // What a drainer's round does, as the fixture's scripted side sees the
  // outbox before the step: some of its ids, in id order, each told to its
  // parent (one children_done per parent, or child_done each) and then,
  // mostly, acknowledged (outbox_ack_many with each side's own scores, or
  // outbox_ack). Not acknowledging is a drainer killed between the two:
  // the next round tells again, and changes nothing.
  struct Round {
    std::vector<ChildNews> news;
    std::vector<std::string> acked;
    bool batched = true;
  };
  Round drain_round(Connection& scripted) {
    Round r;
    r.batched = chance(70);
    Reply ids = scripted.command({"ZRANGE", q_.outbox, "0", "-1"});
    if (ids.type != Reply::Type::Array) return r;  // the outbox broken: nothing to drain
    std::vector<std::string> chosen;
    for (const Reply& id : ids.elements) {
      if (chance(70) && chosen.size() < 6) chosen.push_back(id.str);
    }
    std::sort(chosen.begin(), chosen.end());
    const bool ack = chance(85);
    for (const std::string& id : chosen) {
      if (ack) r.acked.push_back(id);
      if (auto n = news_of(scripted, id)) r.news.push_back(std::move(*n));
    }
    return r;
  }

  // The calls of a round on one side: acknowledgements carry that side's
  // scores (each side's clock wrote its own).
  std::vector<ScriptCall> round_calls(const Round& r, Connection& side) const {
    std::vector<ScriptCall> calls;
    std::map<std::string, std::vector<const ChildNews*>> by_parent;
    for (const ChildNews& n : r.news) {
      if (r.batched) {
        by_parent[n.parent_id].push_back(&n);
      } else {
        calls.push_back(child_done_call(q_, n.parent_id, n.child_ref, n.outcome, n.text));
      }
    }
    for (const auto& [parent, news] : by_parent) calls.push_back(children_done_call(q_, parent, news));
    std::vector<std::pair<std::string, std::int64_t>> scored;
    for (const std::string& id : r.acked) {
      Reply s = side.command({"ZSCORE", q_.outbox, id});
      const std::int64_t score = s.type == Reply::Type::String ? std::stoll(s.str) : 0;
      if (r.batched) {
        scored.emplace_back(id, score);
      } else {
        calls.push_back(outbox_ack_call(q_, id, keep_ms_, score));
      }
    }
    if (!scored.empty()) calls.push_back(outbox_ack_many_call(q_, keep_ms_, scored));
    return calls;
  }

  // A flow's keys broken by another writer: a child's row given an expiry
  // (complete_flow persists it), its parent ref emptied or mangled, a plain
  // job made a parent, a parent's deps or results of another type, the
  // outbox not a zset (mended again more often than broken).
  std::vector<Command> corrupt(Connection& scripted) {
    if (scripted.command({"TYPE", q_.outbox}).str == "string" && chance(70)) return {{"DEL", q_.outbox}};
    const std::string id = flow_ids_.empty() ? new_id_() : flow_ids_[pick(static_cast<int>(flow_ids_.size()))];
    switch (pick(7)) {
      case 0:
      case 1: return {{"PEXPIRE", q_.row(id), "3600000"}};
      case 2: return {{"HSET", q_.row(id), "parent", chance(50) ? "" : "no ref at all"}};
      case 3: return {{"HSET", q_.row(id), "children", "2"}};
      case 4: return {{"DEL", q_.deps(id)}, {"SET", q_.deps(id), "not a set"}};
      case 5: return {{"DEL", q_.results(id)}, {"SET", q_.results(id), "not a hash"}};
      default: return {{"DEL", q_.outbox}, {"SET", q_.outbox, "not a zset"}};
    }
  }

  // The run's count of a step's replies, read on the scripted side.
  void count(const ScriptCall& call, const Reply& r) {
    const bool one = r.type == Reply::Type::Integer && r.integer == 1;
    switch (call.script) {
      case Script::EnqueueParent: parents_ += one; break;
      case Script::EnqueueChild: children_ += one; break;
      case Script::CompleteFlow: completed_ += one; break;
      case Script::FailFlow: dead_ += r.type == Reply::Type::Integer && r.integer == 2; break;
      case Script::ChildDone: released_ += r.type == Reply::Type::Integer && r.integer == 2; break;
      case Script::ChildrenDone:
        for (const Reply& e : r.elements) released_ += e.type == Reply::Type::Integer && e.integer == 2;
        break;
      default: return;
    }
    ++flow_calls_[script_info(call.script).name];
  }

  std::string summary() const {
    std::string calls;
    for (const auto& [name, n] : flow_calls_) calls += (calls.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return "flows: " + std::to_string(parents_) + " parents (" + std::to_string(grouped_parents_) +
           " drawn grouped) and " + std::to_string(children_) + " children (" + std::to_string(grouped_children_) +
           " drawn grouped) enqueued; " + std::to_string(held_children_) + " children and " +
           std::to_string(held_parents_) + " parents settled while held; " + std::to_string(completed_) +
           " complete_flow done, " + std::to_string(dead_) + " fail_flow dead, " + std::to_string(released_) +
           " parents released; calls: " + calls;
  }
  int settled() const {
    auto at = [this](const char* name) {
      auto it = flow_calls_.find(name);
      return it == flow_calls_.end() ? 0 : it->second;
    };
    return at("complete_flow") + at("fail_flow");
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int percent) { return pick(100) < percent; }

  void tree(const std::string& id, const std::string& parent_ref, int kids, int depth, std::vector<ScriptCall>& parents,
            std::vector<ScriptCall>& leaves) {
    static const std::vector<std::string> policies = {"fail", "wait", "ignore"};
    ScriptCall p{Script::EnqueueParent,
                 {q_.row(id), q_.waiting, q_.deps(id), q_.meta},
                 {id, "parent", std::to_string(pick(3) - 1), policies[pick(3)], parent_ref}};
    parents.push_back(p);
    const std::size_t self = parents.size() - 1;
    for (int k = 0; k < kids; ++k) {
      const std::string child = new_id_();
      parents[self].args.push_back(q_.ref(child));
      if (chance(8)) continue;  // never enqueued: its parent waits on it
      if (depth == 0 && chance(25)) {
        tree(child, q_.ref(id), 1 + pick(2), depth + 1, parents, leaves);
      } else {
        leaves.push_back(child_call(child, q_.ref(id)));
      }
    }
    // A grouped parent: its row carries the group, and the child news
    // that releases it sends it to its group.
    if (chance(30)) {
      const std::vector<std::string>& groups = GroupDraws::names();
      parents[self].args.insert(parents[self].args.end(), {"group", groups[pick(static_cast<int>(groups.size()))]});
      ++grouped_parents_;
    }
  }

  // A child, grouped one time in three: the builder's six KEYS, so the
  // claim finds it in its group's zset.
  ScriptCall child_call(const std::string& id, const std::string& parent_ref) {
    ScriptCall c{Script::EnqueueChild,
                 {q_.row(id), q_.pending, q_.meta},
                 {id, "child", std::to_string(pick(3) - 1), parent_ref}};
    if (chance(33)) {
      const std::vector<std::string>& groups = GroupDraws::names();
      add_group_option(q_, groups[pick(static_cast<int>(groups.size()))], c.keys, c.args);
      ++grouped_children_;
    }
    return c;
  }

  // The news of an outbox id as the drainer reads it: none when the row is
  // gone, not final, or names no parent of this queue.
  std::optional<ChildNews> news_of(Connection& scripted, const std::string& id) const {
    Reply f = scripted.command({"HMGET", q_.row(id), "parent", "state", "result", "error"});
    if (f.type != Reply::Type::Array || f.elements[0].type != Reply::Type::String) return std::nullopt;
    const std::string& state = f.elements[1].str;
    if (state != "completed" && state != "dead") return std::nullopt;
    auto ref = parse_ref(f.elements[0].str);
    if (!ref || ref->queue != q_.queue) return std::nullopt;
    const bool done = state == "completed";
    return ChildNews{ref->queue, ref->id, q_.ref(id), done ? ChildOutcome::Completed : ChildOutcome::Dead,
                     f.elements[done ? 2 : 3].str};
  }

  std::mt19937_64& rng_;
  const QueueKeys& q_;
  std::function<std::string()> new_id_;
  std::vector<std::string> flow_ids_;
  const std::int64_t keep_ms_ = 3600000;
  int grouped_parents_ = 0, grouped_children_ = 0;
  int parents_ = 0, children_ = 0, completed_ = 0, dead_ = 0, released_ = 0, held_children_ = 0, held_parents_ = 0;
  std::map<std::string, int> flow_calls_;
};

}  // namespace echomq::test
