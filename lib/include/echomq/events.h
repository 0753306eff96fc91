// A queue's events (PROTOCOL.md, "Events"): meta's `events` = N turns on
// the stream emq:{q}:events, N its approximate length. Every transition
// that writes a job's state then takes the stream as its last KEY and N as
// its last ARGV; with_events is the one place that adds them, and
// EventsBook the one that knows which queues keep events. The entries are
// read back (decode_entries) by whoever waits or watches.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

// The range of meta's events, which the scripts check.
inline constexpr std::int64_t kMaxEventsLength = 10000000;
// What a queue keeps unless its config says otherwise (docs/decisions.md).
inline constexpr std::int64_t kDefaultEventsLength = 10000;

// HGET meta events.
Command events_read(const QueueKeys& q);
// Its length, 0 when the queue keeps no events: the field absent, or not
// an integer in 1..kMaxEventsLength (a broken field is read as off by every
// speaker alike, so a waiter never waits on a stream nobody writes).
std::int64_t decode_events(const Reply& r);
// What makes meta hold `length`: HSET, or HDEL for 0 (off).
Command events_write(const QueueKeys& q, std::int64_t length);

// The call as it is, or with the stream and length added last when length
// > 0 and its script takes them.
ScriptCall with_events(ScriptCall call, const QueueKeys& q, std::int64_t length);
// Whether a call carries a stream (its last KEY is emq:{q}:events).
bool carries_events(const ScriptCall& call);
// The entries a transition that carried the stream appended, as its reply
// tells: one per job whose state it wrote (claim: the jobs it leased; the
// delayed jobs it promoted are not in its reply and not counted).
std::int64_t entries_appended(const ScriptCall& call, const Reply& reply);

// The events length of each queue as this process last learnt it: read
// from meta (one round trip for the queues not known or older than
// fresh_for), or told by a read that rode with a claim. An executor given
// a book (ConnectionOptions::events) asks it for every call. Thread-safe.
class EventsBook {
 public:
  explicit EventsBook(std::chrono::milliseconds fresh_for = std::chrono::seconds(1)) : fresh_for_(fresh_for) {}
  // The lengths of these queues, read in one pipeline for those not fresh.
  std::vector<std::int64_t> lengths(Executor& x, const std::vector<std::string_view>& queues);
  std::int64_t length(Executor& x, std::string_view queue);
  void learnt(std::string_view queue, std::int64_t length);

 private:
  struct Known {
    std::int64_t length = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::chrono::milliseconds fresh_for_;
  std::mutex mutex_;
  std::map<std::string, Known, std::less<>> known_;
};

// One entry of a queue's stream.
struct EventEntry {
  std::string entry_id;  // the server's, "<ms>-<seq>"
  std::string event;     // pending, delayed, active, waiting, completed, dead, removed, progress
  std::string job_id;
  std::string attempt;
  std::string error;     // on an entry caused by a failure
  std::string progress;  // on a progress entry
};
// XRANGE's reply, or the entries of one stream in XREAD's.
std::vector<EventEntry> decode_entries(const Reply& r);
// The job is over for a waiter: completed, dead, or its row removed.
bool is_final_event(std::string_view event);

}  // namespace echomq
