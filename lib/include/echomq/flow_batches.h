// Telling parents in batches (PROTOCOL.md, "Flows"): the news of many
// finished children delivered with one children_done per parent, and their
// outbox entries acknowledged with one outbox_ack_many per queue, each set
// of calls in one round trip (split per node on a cluster). What a child
// costs its parent then hardly depends on how many children finish at once.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/flow_speaker.h"
#include "echomq/keyspace.h"

namespace echomq {

// A finished child, for its parent.
struct ChildNews {
  std::string parent_queue;
  std::string parent_id;
  std::string child_ref;  // "<queue>:<id>"
  ChildOutcome outcome = ChildOutcome::Completed;
  std::string text;  // the result, or the error
};

// children_done on the parent's queue, with its stats and its outbox (a
// parent that is itself a child and dies here reaches its own parent).
// Every news given must be of that one parent.
ScriptCall children_done_call(const QueueKeys& parent_queue, std::string_view parent_id,
                              const std::vector<const ChildNews*>& news);
// One result per child, in the order given; throws as decode_child_done
// does, or Error{Protocol} when the reply does not hold `children` of them.
std::vector<ChildDoneResult> decode_children_done(const Reply& r, std::size_t children);

// Tells the parents: one children_done per parent, in one batch. One
// reply per news, in its order, as child_done would have answered it: an
// integer, or the error reply of its parent's call (which then told none
// of that parent's children; the others are told). Throws a transient
// Error when the server cannot be reached.
std::vector<Reply> tell_parents(Executor& x, const std::vector<ChildNews>& news);

// A parent enqueued by a speaker older than meta's `parents` flag left its
// queue without it, and a claimer reading the flag would run the parent
// without its children's results. A teller marks each parent's queue
// before its first news to it, so before the parent can be released: once
// per queue for the life of this object (the flag is never cleared).
class ParentQueues {
 public:
  void mark(Executor& x, const std::vector<ChildNews>& news);

 private:
  std::set<std::string> marked_;
};

// An outbox entry whose parent has been told.
struct OutboxEntry {
  std::string queue;
  std::string id;
  std::int64_t keep_ms = 0;  // what outbox_ack does with a completed row
  // The score it had when read; nullopt for a score that is no whole
  // number of ms (written by another speaker), acknowledged without one.
  std::optional<std::int64_t> score;
};

// outbox_ack_many on q: (id, score) pairs, at least one.
ScriptCall outbox_ack_many_call(const QueueKeys& q, std::int64_t keep_ms,
                                const std::vector<std::pair<std::string, std::int64_t>>& ids);
// One bool per id (true: it left the outbox), in the order given.
std::vector<bool> decode_outbox_ack_many(const Reply& r, std::size_t ids);

// Acknowledges the entries: one outbox_ack_many per queue and keep_ms, and
// outbox_ack for an entry without a score, in one batch. One reply per
// entry, in its order: outbox_ack's integer, or the error reply of its call.
std::vector<Reply> ack_outboxes(Executor& x, const std::vector<OutboxEntry>& entries);

}  // namespace echomq
