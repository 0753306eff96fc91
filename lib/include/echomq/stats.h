// Reads and controls that need no transition: depths and counters, pause,
// the row of one job, the registry of queue names. Plain commands, pipelined.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/limits.h"

namespace echomq {

// A pause's who, why and end, as meta holds them (PROTOCOL.md, "Pause").
struct PauseInfo {
  std::string by;      // "" when not said
  std::string reason;  // "" when not said
  // The server ms it ends at by itself; nullopt for a pause without end.
  std::optional<std::int64_t> until_ms;
  // paused_until as it stands when it is not an integer in 0..10^15: claim
  // refuses the queue until it is mended (resume, or pause again).
  std::optional<std::string> broken_until;
};

struct QueueStats {
  std::string queue;
  std::int64_t pending = 0;          // grouped jobs included
  std::int64_t grouped_pending = 0;  // of them, those waiting in their groups
  std::int64_t groups = 0;           // groups holding keys (groups.h reads them)
  std::int64_t active = 0;
  std::int64_t delayed = 0;
  std::int64_t dead = 0;
  std::int64_t waiting = 0;  // parents of flows waiting for their children
  bool paused = false;
  PauseInfo pause;  // read whether or not paused
  // The queue's limits in meta (claim enforces them): "" when none, else
  // "max_active 20, rate 100/1000ms", or "broken: <why>".
  std::string limits;
  // The same fields as read, the bucket included, for limit_status.
  LimitFields limit_fields;
  // claimed, completed, retried, dead, reaped, released (absent ones are 0)
  std::map<std::string, std::int64_t> counters;
  // The next job a claim would take, if any (its minted id dates it).
  std::optional<std::string> head_pending;
  // The millisecond head_pending was minted in: the age of the oldest
  // pending job of its lane (ids are minted in order and a lane is served
  // in id order). nullopt when there is none or its id was not minted
  // (a producer's own id carries no time).
  std::optional<std::int64_t> head_pending_since_ms;
  // What could not be read, one line each naming the key and field (a
  // counter that is not an integer, a key of the wrong type): another
  // writer broke it. The rest is read as usual; a counter named here is
  // absent from `counters`.
  std::vector<std::string> problems;
};

// One round trip for all the queues given. What a peer broke is reported in
// QueueStats::problems, never thrown: one bad field must not hide the rest.
std::vector<QueueStats> stats(Executor& x, const std::vector<QueueKeys>& queues);
QueueStats stats(Executor& x, const QueueKeys& q);

// What `emq pause` says with a pause: who, why, and for how long. Who and
// why are plain text (bytes.h, is_plain_text): every tool shows them.
struct PauseRequest {
  std::string by;                      // at most 64 bytes; "" says nobody
  std::string reason;                  // at most 256 bytes; "" says no reason
  std::optional<std::int64_t> for_ms;  // ends by itself this long after now (the server's clock)
};
inline constexpr std::size_t kPausedByMax = 64;
inline constexpr std::size_t kPausedReasonMax = 256;

// Sets paused = 1 with the request's fields; a field it leaves empty is
// deleted, so nothing of an earlier pause stays. Error{Invalid} for a field
// too long or not plain text, or an end out of range, before anything is
// written.
void pause(Executor& x, const QueueKeys& q, const PauseRequest& how = {});
// Deletes the pause's four fields.
void resume(Executor& x, const QueueKeys& q);

struct JobRow {
  std::string id;
  std::map<std::string, std::string> fields;  // state, attempts, payload, ...
};
// nullopt when there is no such row.
std::optional<JobRow> inspect(Executor& x, const QueueKeys& q, std::string_view id);

// Ids of the dead set, oldest death first, with their death times.
std::vector<std::pair<std::string, std::int64_t>> list_dead(Executor& x, const QueueKeys& q, std::int64_t limit);

// Every queue of {emq}:queues with its stats: `emq stats` with no names,
// and the overview of `emq web`. The registry's read and one pipeline for
// every queue (stats above): two round trips however many queues there are.
struct Overview {
  std::vector<QueueStats> queues;  // by name
  // Names a peer put in the registry that no queue may have (too long,
  // bad bytes): left out of queues, for the caller to mention.
  std::vector<std::string> skipped;
};
Overview overview(Executor& x);

// {emq}:queues: names of queues known to speakers, sorted.
std::vector<std::string> known_queues(Executor& x);
void register_queues(Executor& x, const std::vector<std::string>& names);

}  // namespace echomq
