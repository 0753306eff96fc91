// The L1 keyspace: queue names, the keys of a queue, the wire identity.
// This is the only code that spells "emq:{".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace echomq {

inline constexpr std::string_view kWireVersion = "emq/1";
inline constexpr std::string_view kVersionKey = "{emq}:version";
inline constexpr std::string_view kQueuesKey = "{emq}:queues";

// 1-64 bytes of [A-Za-z0-9_.-].
bool valid_queue_name(std::string_view name);
// The queue whose key this is (the hashtag of emq:{q}:...), "" for a key of
// no queue.
std::string_view queue_of_key(std::string_view key);
// emq:{q}:<type>, for a queue name already checked.
std::string queue_key(std::string_view queue, std::string_view type);
// Throws Error{Invalid} naming the rule, before any key is built.
void check_queue_name(std::string_view name);

// A unique key (PROTOCOL.md, "Unique jobs"): 1-128 bytes of [0-9A-Za-z_.:-].
bool valid_unique_key(std::string_view key);
// Throws Error{Invalid} naming the rule.
void check_unique_key(std::string_view key);
// A group of a queue (PROTOCOL.md, "Groups"): 1-128 bytes of [0-9A-Za-z_.:-].
bool valid_group_name(std::string_view name);
// Throws Error{Invalid} naming the rule.
void check_group_name(std::string_view name);

// Every key of one queue, built once. The braces are the cluster hashtag:
// all of them live in one slot, so one script may touch them together.
struct QueueKeys {
  explicit QueueKeys(std::string_view queue);  // checks the name

  std::string queue;
  std::string pending;       // zset: id -> lane
  std::string active;        // zset: id -> lease deadline (ms)
  std::string delayed;       // zset: id -> due time (ms)
  std::string dead;          // zset: id -> time of death (ms)
  std::string stats;         // hash: monotonic counters
  std::string meta;          // hash: paused, published policy
  std::string row_root;      // "emq:{q}:job:"; a row is row_root + id
  std::string cron;          // hash: schedule name -> <fire_ms>:<id> of its last fire
  std::string schedules;     // hash: schedule name -> its definition as JSON, for tools
  std::string waiting;       // zset: parents waiting for children -> time enqueued
  std::string outbox;        // zset: finished children whose parent is not told yet
  std::string deps_root;     // "emq:{q}:deps:"; a parent's deps are deps_root + id
  std::string results_root;  // "emq:{q}:results:"; its results are results_root + id
  std::string events;        // stream: one entry per change of a job's state, when meta has events
  std::string uniq_root;     // "emq:{q}:uniq:"; the lock of unique key k is uniq_root + k
  // Groups (docs/protocol.md, "Groups"): the block of seven KEYS every
  // claiming, ending or moving transition takes, in this order.
  std::string gq_root;    // "emq:{q}:gq:"; a group's pending ids are gq_root + group
  std::string grp_root;   // "emq:{q}:grp:"; a group's scheduler state
  std::string gact_root;  // "emq:{q}:gact:"; a group's counted ids
  std::string gidx;       // zset: group -> its pending count; * -> their sum
  std::string rot;        // list: the rotation, head first
  std::string groups;     // hash: group -> policy; * -> the default policy
  std::string gwait;      // zset: groups out of the rotation until a time

  // The row of a job. Checks only the wire's gate (check_wire_gate): the
  // ids settled, shown and cancelled are read back from the server and may
  // be any shape a peer wrote. Enqueueing checks the full form first.
  std::string row(std::string_view job_id) const;
  // A parent's deps and results keys, with row()'s check.
  std::string deps(std::string_view job_id) const;
  std::string results(std::string_view job_id) const;
  // The lock of a unique key, checked by check_unique_key.
  std::string uniq(std::string_view key) const;
  // The group block, in its order, appended to keys.
  void add_group_block(std::vector<std::string>& keys) const;
  // A group's own keys, with check_group_name.
  std::string gq(std::string_view group) const;
  std::string grp(std::string_view group) const;
  std::string gact(std::string_view group) const;
  // The ref "<queue>:<id>" by which flows name a job of this queue.
  std::string ref(std::string_view job_id) const;
};

}  // namespace echomq
