#include "echomq/flow_batches.h"

#include <algorithm>
#include <map>
#include <utility>

#include "echomq/errors.h"
#include "script_replies.h"

namespace echomq {

namespace {
// Positions of items grouped by a key, the groups in the order their first
// item came.
template <typename Key>
class Groups {
 public:
  void add(const Key& key, std::size_t item) {
    auto [it, fresh] = index_.emplace(key, members_.size());
    if (fresh) members_.emplace_back();
    members_[it->second].push_back(item);
  }
  const std::vector<std::vector<std::size_t>>& members() const { return members_; }

 private:
  std::map<Key, std::size_t> index_;
  std::vector<std::vector<std::size_t>> members_;
};

// A batch call's reply spread over its items: element i to item i, or the
// call's error to each of them.
void spread(const Reply& r, const std::vector<std::size_t>& items, std::vector<Reply>& out, const char* op) {
  if (r.is_error()) {
    for (std::size_t item : items) out[item] = r;
    return;
  }
  if (r.type != Reply::Type::Array || r.elements.size() != items.size()) {
    throw Error(
        ErrorKind::Protocol, op,
        "expected an array of " + std::to_string(items.size()) + " replies; is lua/" + op + ".lua the emq/1 one?");
  }
  for (std::size_t i = 0; i < items.size(); ++i) out[items[i]] = r.elements[i];
}

// A batch call's reply, each element decoded as its single form's reply.
template <typename T, typename Decode>
std::vector<T> decode_each(const Reply& r, std::size_t count, const char* op, Decode decode) {
  throw_if_error(r, op);
  std::vector<Reply> each(count);
  std::vector<std::size_t> items(count);
  for (std::size_t i = 0; i < count; ++i) items[i] = i;
  spread(r, items, each, op);
  std::vector<T> out;
  out.reserve(count);
  for (const Reply& e : each) out.push_back(decode(e));
  return out;
}
}  // namespace

ScriptCall children_done_call(const QueueKeys& pq, std::string_view parent_id,
                              const std::vector<const ChildNews*>& news) {
  ScriptCall call{Script::ChildrenDone,
                  {pq.row(parent_id), pq.deps(parent_id), pq.results(parent_id), pq.waiting, pq.pending, pq.dead,
                   pq.stats, pq.outbox},
                  {}};
  pq.add_group_block(call.keys);
  call.keys.push_back(pq.uniq_root);
  call.args.reserve(3 * news.size());
  for (const ChildNews* n : news) {
    call.args.push_back(n->child_ref);
    call.args.push_back(to_string(n->outcome));
    call.args.push_back(n->text);
  }
  return call;
}

std::vector<ChildDoneResult> decode_children_done(const Reply& r, std::size_t children) {
  return decode_each<ChildDoneResult>(r, children, "children_done", decode_child_done);
}

std::vector<Reply> tell_parents(Executor& x, const std::vector<ChildNews>& news) {
  Groups<std::pair<std::string, std::string>> parents;
  for (std::size_t i = 0; i < news.size(); ++i) parents.add({news[i].parent_queue, news[i].parent_id}, i);
  std::vector<ScriptCall> calls;
  calls.reserve(parents.members().size());
  for (const std::vector<std::size_t>& items : parents.members()) {
    std::vector<const ChildNews*> of_one;
    of_one.reserve(items.size());
    for (std::size_t i : items) of_one.push_back(&news[i]);
    const ChildNews& first = *of_one.front();
    calls.push_back(children_done_call(QueueKeys(first.parent_queue), first.parent_id, of_one));
  }
  std::vector<Reply> out(news.size());
  if (calls.empty()) return out;
  std::vector<Reply> replies = x.eval_batch(calls);
  for (std::size_t g = 0; g < replies.size(); ++g) spread(replies[g], parents.members()[g], out, "children_done");
  return out;
}

void ParentQueues::mark(Executor& x, const std::vector<ChildNews>& news) {
  std::vector<Command> marks;
  std::vector<std::string> queues;
  for (const ChildNews& n : news) {
    if (marked_.count(n.parent_queue) || std::find(queues.begin(), queues.end(), n.parent_queue) != queues.end()) {
      continue;
    }
    queues.push_back(n.parent_queue);
    marks.push_back({"HSET", QueueKeys(n.parent_queue).meta, "parents", "1"});
  }
  if (marks.empty()) return;
  std::vector<Reply> replies = x.pipeline(marks);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) throw error_from_reply("parents flag", replies[i].str);
    marked_.insert(queues[i]);
  }
}

ScriptCall outbox_ack_many_call(const QueueKeys& q, std::int64_t keep_ms,
                                const std::vector<std::pair<std::string, std::int64_t>>& ids) {
  ScriptCall call{Script::OutboxAckMany, {q.outbox, q.row_root}, {std::to_string(keep_ms)}};
  call.args.reserve(1 + 2 * ids.size());
  for (const auto& [id, score] : ids) {
    call.args.push_back(id);
    call.args.push_back(std::to_string(score));
  }
  return call;
}

std::vector<bool> decode_outbox_ack_many(const Reply& r, std::size_t ids) {
  return decode_each<bool>(r, ids, "outbox_ack_many", decode_outbox_ack);
}

std::vector<Reply> ack_outboxes(Executor& x, const std::vector<OutboxEntry>& entries) {
  Groups<std::pair<std::string, std::int64_t>> queues;  // the entries with a score
  std::vector<ScriptCall> calls;
  std::vector<std::size_t> single;  // entry of each outbox_ack call, first in calls
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const OutboxEntry& e = entries[i];
    if (e.score) {
      queues.add({e.queue, e.keep_ms}, i);
    } else {
      calls.push_back(outbox_ack_call(QueueKeys(e.queue), e.id, e.keep_ms));
      single.push_back(i);
    }
  }
  for (const std::vector<std::size_t>& items : queues.members()) {
    std::vector<std::pair<std::string, std::int64_t>> ids;
    ids.reserve(items.size());
    for (std::size_t i : items) ids.emplace_back(entries[i].id, *entries[i].score);
    const OutboxEntry& first = entries[items.front()];
    calls.push_back(outbox_ack_many_call(QueueKeys(first.queue), first.keep_ms, ids));
  }
  std::vector<Reply> out(entries.size());
  if (calls.empty()) return out;
  std::vector<Reply> replies = x.eval_batch(calls);
  for (std::size_t c = 0; c < single.size(); ++c) out[single[c]] = std::move(replies[c]);
  for (std::size_t g = 0; g < queues.members().size(); ++g) {
    spread(replies[single.size() + g], queues.members()[g], out, "outbox_ack_many");
  }
  return out;
}

}  // namespace echomq
