#include "echomq/events.h"

#include "echomq/whole_number.h"

namespace echomq {

Command events_read(const QueueKeys& q) { return {"HGET", q.meta, "events"}; }

std::int64_t decode_events(const Reply& r) {
  // At most 8 digits, as every speaker reads the field (leading zeros too).
  if (r.type != Reply::Type::String || r.str.size() > 8) return 0;
  return whole_number_in(r.str, 1, kMaxEventsLength).value_or(0);
}

Command events_write(const QueueKeys& q, std::int64_t length) {
  if (length <= 0) return {"HDEL", q.meta, "events"};
  return {"HSET", q.meta, "events", std::to_string(length)};
}

ScriptCall with_events(ScriptCall call, const QueueKeys& q, std::int64_t length) {
  if (length <= 0 || !script_info(call.script).events) return call;
  call.keys.push_back(q.events);
  call.args.push_back(std::to_string(length));
  return call;
}

bool carries_events(const ScriptCall& call) {
  constexpr std::string_view tail = "}:events";
  if (call.keys.empty() || !script_info(call.script).events) return false;
  const std::string& last = call.keys.back();
  return last.size() > tail.size() && last.compare(last.size() - tail.size(), tail.size(), tail) == 0 &&
         !queue_of_key(last).empty();
}

std::int64_t entries_appended(const ScriptCall& call, const Reply& r) {
  if (r.type == Reply::Type::Array) {
    if (call.script == Script::Claim) return static_cast<std::int64_t>(r.elements.size() / 4);
    // [moved, skipped]; a unique duplicate's or refusal's [code, holder,
    // state] appends nothing.
    if (call.script == Script::RetryDead && !r.elements.empty()) return r.elements[0].integer;
    if (call.script == Script::Enqueue || call.script == Script::EnqueueChild || call.script == Script::EnqueueParent ||
        call.script == Script::EnqueueCron || call.script == Script::RetryJob) {
      return 0;
    }
    std::int64_t n = 0;
    for (const Reply& e : r.elements) {
      if (e.type != Reply::Type::Integer) continue;
      // children_done: child_done's reply per child, an entry for 2 and 3;
      // reap: [requeued, dead], an entry each.
      n += call.script == Script::ChildrenDone ? (e.integer == 2 || e.integer == 3 ? 1 : 0) : e.integer;
    }
    return n;
  }
  if (r.type != Reply::Type::Integer) return 0;
  switch (call.script) {
    case Script::RetryDead:
    case Script::TrimDead: return r.integer;
    case Script::Fail:
    case Script::FailFlow: return r.integer == 1 || r.integer == 2 ? 1 : 0;
    case Script::EnqueueCron:
    case Script::Cancel: return r.integer == 1 ? 1 : 0;
    case Script::ChildDone: return r.integer == 2 || r.integer == 3 ? 1 : 0;
    default: return r.integer == 1 ? 1 : 0;
  }
}

std::vector<std::int64_t> EventsBook::lengths(Executor& x, const std::vector<std::string_view>& queues) {
  std::vector<std::int64_t> out(queues.size(), 0);
  std::vector<std::size_t> stale;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < queues.size(); ++i) {
      auto it = known_.find(queues[i]);
      if (it != known_.end() && now - it->second.at < fresh_for_) {
        out[i] = it->second.length;
      } else {
        stale.push_back(i);
      }
    }
  }
  if (stale.empty()) return out;
  std::vector<Command> reads;
  reads.reserve(stale.size());
  for (std::size_t i : stale) reads.push_back({"HGET", queue_key(queues[i], "meta"), "events"});
  std::vector<Reply> replies = x.pipeline(reads);
  for (std::size_t k = 0; k < stale.size(); ++k) {
    // A read the server refused (meta of another type) is no events: the
    // transition beside it says what is wrong.
    out[stale[k]] = decode_events(replies[k]);
    learnt(queues[stale[k]], out[stale[k]]);
  }
  return out;
}

std::int64_t EventsBook::length(Executor& x, std::string_view queue) { return lengths(x, {queue}).front(); }

void EventsBook::learnt(std::string_view queue, std::int64_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  Known& k = known_[std::string(queue)];
  k.length = length;
  k.at = std::chrono::steady_clock::now();
}

std::vector<EventEntry> decode_entries(const Reply& r) {
  std::vector<EventEntry> out;
  if (r.type != Reply::Type::Array) return out;
  out.reserve(r.elements.size());
  for (const Reply& e : r.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) continue;
    EventEntry entry;
    entry.entry_id = e.elements[0].str;
    const std::vector<Reply>& f = e.elements[1].elements;
    for (std::size_t i = 0; i + 1 < f.size(); i += 2) {
      const std::string& name = f[i].str;
      const std::string& value = f[i + 1].str;
      if (name == "event") {
        entry.event = value;
      } else if (name == "id") {
        entry.job_id = value;
      } else if (name == "attempt") {
        entry.attempt = value;
      } else if (name == "error") {
        entry.error = value;
      } else if (name == "progress") {
        entry.progress = value;
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

bool is_final_event(std::string_view event) { return event == "completed" || event == "dead" || event == "removed"; }

}  // namespace echomq
