// check_flow and enqueue_flow (flows.h): a tree checked whole, host-side,
// for everything the server would refuse, before anything is sent; then
// enqueued a level at a time, parents first.
#include <algorithm>
#include <limits>
#include <map>

#include "echomq/errors.h"
#include "echomq/flow_enqueue.h"
#include "echomq/job_id.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {
std::string num(std::int64_t v) { return std::to_string(v); }

// The least proto-max-bulk-len a server takes: a payload within it needs
// no question to the server. Its default, where CONFIG is not ours to call.
constexpr std::size_t kLeastBulkLimit = 1024 * 1024;
constexpr std::size_t kDefaultBulkLimit = 512 * kLeastBulkLimit;
// The parents named in a message at most; the count says the rest.
constexpr std::size_t kNamedParents = 10;

// One walk over the tree, depth first, holding the path from the root.
class TreeCheck {
 public:
  void visit(const FlowNode& n) {
    check_flow_depth(at_);
    fields(n);
    if (!n.id.empty()) {
      auto [first, fresh] = seen_.emplace(n.queue + ":" + n.id, at_);
      if (!fresh) {
        bad(first->first + " is given twice in the tree (first at " + flow_node_path(first->second) +
            "): a job is enqueued once and has one parent; give each node its own id");
      }
    }
    if (n.payload.size() > largest_) {
      largest_ = n.payload.size();
      largest_at_ = at_;
    }
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      at_.push_back(i);
      visit(n.children[i]);
      at_.pop_back();
    }
  }

  // The largest payload's size and where it is.
  std::size_t largest() const { return largest_; }
  std::string largest_path() const { return flow_node_path(largest_at_); }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    throw Error(ErrorKind::Invalid, "flow", flow_node_path(at_) + ": " + what);
  }

  void fields(const FlowNode& n) const {
    if (!valid_queue_name(n.queue))
      bad("queue '" + n.queue.substr(0, 80) + "' is not a valid queue name: use 1-64 bytes of A-Z a-z 0-9 _ . -");
    if (n.lane < kMinLane || n.lane > kMaxLane) bad("lane " + num(n.lane) + " is out of range: use -1000..1000");
    if (!n.id.empty() && !valid_job_id(n.id))
      bad("id '" + n.id.substr(0, 80) + "' is not a job id: JOB_ then 1-128 bytes of [0-9A-Za-z_.:-]");
    if (n.on_child_failure != "fail" && n.on_child_failure != "wait" && n.on_child_failure != "ignore") {
      bad("on_child_failure '" + n.on_child_failure.substr(0, 40) + "' must be fail, wait or ignore");
    }
    if (!n.group.empty() && !valid_group_name(n.group))
      bad("group '" + n.group.substr(0, 80) + "' is not a valid group: use 1-128 bytes of A-Z a-z 0-9 _ . : -");
  }

  std::vector<std::size_t> at_;
  std::map<std::string, std::vector<std::size_t>> seen_;  // given ref -> where first
  std::size_t largest_ = 0;
  std::vector<std::size_t> largest_at_;
};

// The largest argument the server takes (proto-max-bulk-len); its default
// where CONFIG is not ours to call (a managed service).
std::size_t server_bulk_limit(Executor& x) {
  const Reply r = x.command({"CONFIG", "GET", "proto-max-bulk-len"});
  if (r.type == Reply::Type::Array && r.elements.size() == 2) {
    const std::optional<std::int64_t> v =
        whole_number_in(r.elements[1].str, 0, std::numeric_limits<std::int64_t>::max());
    if (v) return static_cast<std::size_t>(*v);
  }
  return kDefaultBulkLimit;
}

// The tree's checks, with payloads up to `bulk_limit` bytes; the largest
// payload's size.
std::size_t check_tree(const FlowNode& root, std::size_t bulk_limit) {
  TreeCheck check;
  check.visit(root);
  if (check.largest() > bulk_limit) {
    throw Error(ErrorKind::Invalid, "flow",
                check.largest_path() + ": the payload of " + num(static_cast<std::int64_t>(check.largest())) +
                    " bytes is over the server's limit of " + num(static_cast<std::int64_t>(bulk_limit)) +
                    " bytes (proto-max-bulk-len)");
  }
  return check.largest();
}

// The call that enqueues one node, its id decided, with `job` (its
// options, the trace context inherited); `parent` is its parent's ref (""
// for the root).
ScriptCall node_call(const FlowNode& n, const JobOptions& job, const std::string& id, const std::string& parent,
                     const std::vector<std::string>& child_refs) {
  QueueKeys q(n.queue);
  if (!child_refs.empty()) {
    ScriptCall c{Script::EnqueueParent,
                 {q.row(id), q.waiting, q.deps(id), q.meta},
                 {id, n.payload, num(n.lane), n.on_child_failure, parent}};
    c.args.insert(c.args.end(), child_refs.begin(), child_refs.end());
    add_job_options(q, job, c.keys, c.args);
    // A waiting parent is in no group's zset: its group goes in its row
    // only, without the six KEYS (docs/protocol.md, "The enqueues").
    if (!n.group.empty()) c.args.insert(c.args.end(), {"group", n.group});
    return c;
  }
  if (!parent.empty()) {
    ScriptCall c{Script::EnqueueChild, {q.row(id), q.pending, q.meta}, {id, n.payload, num(n.lane), parent}};
    add_job_options(q, job, c.keys, c.args);
    add_group_option(q, n.group, c.keys, c.args);
    return c;
  }
  EnqueueOptions o;
  o.lane = n.lane;
  o.job = job;
  o.group = n.group;
  return enqueue_call(q, id, n.payload, o);
}

// The tree's ids, minted where none is given, before anything is sent:
// a parent's call names its children.
FlowJob with_ids(const FlowNode& n) {
  FlowJob job;
  job.queue = n.queue;
  job.id = n.id.empty() ? mint_job_id() : n.id;
  job.children.reserve(n.children.size());
  for (const FlowNode& c : n.children) job.children.push_back(with_ids(c));
  return job;
}

std::string ref_of(const FlowJob& j) { return j.queue + ":" + j.id; }

// A node of the level on its way, with its parent (null for the root)
// and the trace context its parent was enqueued with.
struct LevelEntry {
  const FlowNode* node;
  FlowJob* job;
  const FlowJob* parent;
  JobOptions inherited{};  // only its traceparent and tracestate
};

// A node's options: a node without a traceparent of its own carries its
// parent's context (docs/protocol.md, "Trace context"), so a flow's jobs
// are one trace.
JobOptions options_of(const LevelEntry& e) {
  JobOptions job = e.node->job;
  if (job.traceparent.empty()) {
    job.traceparent = e.inherited.traceparent;
    job.tracestate = e.inherited.tracestate;
  }
  return job;
}

// What went wrong half-way, and whom it leaves waiting: the parents, in
// the order met, of the nodes the server refused (or may not have got).
class HalfWay {
 public:
  void refused(const LevelEntry& e, const std::string& reply) {
    if (!first_) first_ = error_from_reply("flow", "the server refused " + ref_of(*e.job) + ": " + reply);
    ++refused_;
    if (e.parent != nullptr) waiting(*e.parent);
  }
  // A node whose unique key another job holds: not enqueued, so its parent
  // waits for it as for a refusal.
  void held(const LevelEntry& e) {
    if (e.parent == nullptr) return;
    if (!first_) {
      first_ = Error(ErrorKind::Reply, "flow",
                     "the unique key of " + ref_of(*e.job) + " is held by " + e.job->holder.id + " (" +
                         e.job->holder.state + "), so it was not enqueued");
    }
    ++refused_;
    waiting(*e.parent);
  }
  void waiting(const FlowJob& parent) {
    if (std::find(parents_.begin(), parents_.end(), &parent) == parents_.end()) parents_.push_back(&parent);
  }
  bool any() const { return first_.has_value(); }

  // The first refusal (or `cause`), naming the parents left waiting.
  Error error(const std::optional<Error>& cause = std::nullopt) const {
    const Error& e = cause ? *cause : *first_;
    std::string text = e.what();
    if (refused_ > 1) text += " (and " + num(refused_ - 1) + " more jobs of the tree)";
    if (parents_.empty()) return Error(e.kind(), "", text + "; nothing of the tree was enqueued");
    text += cause ? "; these parents may now wait for a child that was not enqueued: "
                  : "; these parents now wait for a child that was not enqueued: ";
    for (std::size_t i = 0; i < parents_.size() && i < kNamedParents; ++i) {
      text += (i > 0 ? ", " : "") + ref_of(*parents_[i]);
    }
    if (parents_.size() > kNamedParents) text += " and " + num(parents_.size() - kNamedParents) + " more";
    const FlowJob& p = *parents_.front();
    return Error(e.kind(), "",
                 text + ". Cancel each (emq cancel QUEUE ID, e.g. emq cancel " + p.queue + " " + p.id +
                     "), or mend the cause and enqueue the same tree again with these ids");
  }

 private:
  std::optional<Error> first_;
  std::size_t refused_ = 0;
  std::vector<const FlowJob*> parents_;
};

// Sends one level; the entries whose call the server refused are noted in
// `half` and left out of the next level.
std::vector<LevelEntry> send_level(Executor& x, const std::vector<LevelEntry>& level, HalfWay& half) {
  std::vector<ScriptCall> calls;
  std::vector<JobOptions> options;
  calls.reserve(level.size());
  options.reserve(level.size());
  for (const LevelEntry& e : level) {
    std::vector<std::string> refs;
    refs.reserve(e.job->children.size());
    for (const FlowJob& c : e.job->children) refs.push_back(ref_of(c));
    options.push_back(options_of(e));
    calls.push_back(node_call(*e.node, options.back(), e.job->id, e.parent != nullptr ? ref_of(*e.parent) : "", refs));
  }
  std::vector<Reply> replies;
  try {
    replies = x.eval_batch(calls);
  } catch (const Error& e) {
    // Which calls of the level were applied is unknown: every parent of
    // the level may wait for a child that is not there.
    for (const LevelEntry& l : level) {
      if (l.parent != nullptr) half.waiting(*l.parent);
    }
    throw half.error(Error(e.kind(), "flow", e.what()));
  }
  std::vector<LevelEntry> next;
  for (std::size_t i = 0; i < level.size(); ++i) {
    const LevelEntry& e = level[i];
    if (replies[i].is_error()) {
      half.refused(e, replies[i].str);
      continue;
    }
    e.job->result = decode_enqueue(replies[i], &e.job->holder);
    if (e.job->result != EnqueueResult::Enqueued && !e.job->holder.id.empty() && e.job->holder.id != e.job->id) {
      half.held(e);
      continue;
    }
    JobOptions context;
    context.traceparent = options[i].traceparent;
    context.tracestate = options[i].tracestate;
    for (std::size_t k = 0; k < e.node->children.size(); ++k) {
      next.push_back({&e.node->children[k], &e.job->children[k], e.job, context});
    }
  }
  return next;
}
}  // namespace

std::string flow_node_path(const std::vector<std::size_t>& at) {
  std::string p = "root";
  for (std::size_t i : at) p += ".children[" + std::to_string(i) + "]";
  return p;
}

void check_flow_depth(const std::vector<std::size_t>& at) {
  // at holds the indexes down to the node: it is on level at.size() + 1.
  if (at.size() < static_cast<std::size_t>(kMaxFlowDepth)) return;
  throw Error(ErrorKind::Invalid, "flow",
              flow_node_path(at) + ": the tree is deeper than " + num(kMaxFlowDepth) +
                  " levels: flatten it (a parent may have any number of children) or split it into flows");
}

void check_flow(const FlowNode& root) { check_tree(root, kDefaultBulkLimit); }

FlowJob enqueue_flow(Executor& x, const FlowNode& root) {
  const std::size_t largest = check_tree(root, kDefaultBulkLimit);
  if (largest > kLeastBulkLimit) check_tree(root, server_bulk_limit(x));
  FlowJob top = with_ids(root);
  HalfWay half;
  std::vector<LevelEntry> level{{&root, &top, nullptr}};
  while (!level.empty()) level = send_level(x, level, half);
  if (half.any()) throw half.error();
  return top;
}

}  // namespace echomq
