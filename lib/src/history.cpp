#include "echomq/history.h"

#include <limits>

#include "echomq/errors.h"
#include "echomq/keyspace.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {

std::string stats_key(std::string_view queue) { return queue_key(queue, "stats"); }

// An interval's number as a field, and back; nullopt for a field another
// writer put there that names no interval.
std::optional<std::int64_t> interval_of(std::string_view field) {
  return whole_number_in(field, 0, std::numeric_limits<std::int64_t>::max());
}

std::optional<std::int64_t> counter_of(const Reply& r) {
  if (r.is_nil()) return 0;
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return whole_number(r.str);
  return std::nullopt;
}

// An error reply about one key: thrown when the server is the trouble
// (LOADING, a lost connection) or no one collects problems; else named in
// `problems` (another writer broke the key) and false, so that one broken
// key stops no other queue's history.
bool usable(const Reply& r, const std::string& key, std::vector<std::string>* problems) {
  if (!r.is_error()) return true;
  Error e = error_from_reply(key, r.str);
  if (e.transient() || problems == nullptr) throw e;
  problems->push_back(key + ": " + r.str.substr(0, 120));
  return false;
}

}  // namespace

std::int64_t history_interval_ms(HistoryGrain grain) {
  return grain == HistoryGrain::Minute ? kHistoryMinuteMs : kHistoryDayMs;
}

std::int64_t history_kept(HistoryGrain grain) {
  return grain == HistoryGrain::Minute ? kHistoryMinutesKept : kHistoryDaysKept;
}

std::string history_key(std::string_view queue, HistoryGrain grain) {
  return queue_key(queue, grain == HistoryGrain::Minute ? "history:minute" : "history:day");
}

std::string history_value(const HistoryCounts& c) {
  return std::to_string(c.claimed) + ' ' + std::to_string(c.completed) + ' ' + std::to_string(c.retried) + ' ' +
         std::to_string(c.dead);
}

std::optional<HistoryCounts> parse_history_value(std::string_view text) {
  // Four counts, one space between each.
  std::int64_t v[4];
  for (int i = 0; i < 4; ++i) {
    const std::size_t space = i < 3 ? text.find(' ') : text.size();
    if (space == std::string_view::npos) return std::nullopt;
    const std::optional<std::int64_t> n =
        whole_number_in(text.substr(0, space), 0, std::numeric_limits<std::int64_t>::max());
    if (!n) return std::nullopt;
    v[i] = *n;
    text.remove_prefix(i < 3 ? space + 1 : space);
  }
  return HistoryCounts{v[0], v[1], v[2], v[3]};
}

std::vector<std::optional<HistoryCounts>> read_counters(Executor& x, const std::vector<std::string>& queues) {
  std::vector<Command> reads;
  for (const std::string& q : queues)
    reads.push_back({"HMGET", stats_key(q), "claimed", "completed", "retried", "dead"});
  std::vector<std::optional<HistoryCounts>> out;
  if (reads.empty()) return out;
  for (const Reply& r : x.pipeline(reads)) {
    if (r.is_error()) {
      // A transient refusal is the server's state; a wrong type, the data's.
      Error e = error_from_reply("history", r.str);
      if (e.transient()) throw e;
    }
    std::optional<std::int64_t> v[4];
    const bool whole = r.type == Reply::Type::Array && r.elements.size() == 4;
    for (std::size_t i = 0; whole && i < 4; ++i) v[i] = counter_of(r.elements[i]);
    if (whole && v[0] && v[1] && v[2] && v[3]) {
      out.push_back(HistoryCounts{*v[0], *v[1], *v[2], *v[3]});
    } else {
      out.push_back(std::nullopt);
    }
  }
  return out;
}

int write_history(Executor& x, const std::vector<std::string>& queues,
                  const std::vector<std::optional<HistoryCounts>>& counts, std::int64_t now_ms,
                  std::vector<std::string>* problems) {
  const std::string minute = std::to_string(now_ms / kHistoryMinuteMs);
  const std::string day = std::to_string(now_ms / kHistoryDayMs);
  std::vector<Command> writes;
  for (std::size_t i = 0; i < queues.size() && i < counts.size(); ++i) {
    if (!counts[i]) continue;
    const std::string value = history_value(*counts[i]);
    writes.push_back({"HSETNX", history_key(queues[i], HistoryGrain::Minute), minute, value});
    writes.push_back({"HSETNX", history_key(queues[i], HistoryGrain::Day), day, value});
  }
  int fresh = 0;
  if (writes.empty()) return fresh;
  const std::vector<Reply> replies = x.pipeline(writes);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (usable(replies[i], writes[i][1], problems) && replies[i].integer == 1) ++fresh;
  }
  return fresh;
}

std::int64_t trim_history(Executor& x, const std::vector<std::string>& queues, std::int64_t now_ms,
                          std::vector<std::string>* problems) {
  std::vector<Command> reads;
  std::vector<std::pair<std::string, std::int64_t>> keys;  // key, first interval kept
  for (const std::string& q : queues) {
    for (HistoryGrain g : {HistoryGrain::Minute, HistoryGrain::Day}) {
      keys.emplace_back(history_key(q, g), now_ms / history_interval_ms(g) - history_kept(g));
      reads.push_back({"HKEYS", keys.back().first});
    }
  }
  if (reads.empty()) return 0;
  const std::vector<Reply> fields = x.pipeline(reads);
  std::vector<Command> deletes;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!usable(fields[i], keys[i].first, problems)) continue;
    Command del{"HDEL", keys[i].first};
    for (const Reply& f : fields[i].elements) {
      // A field that names no interval is no sample: it goes too.
      const std::optional<std::int64_t> n = interval_of(f.str);
      if (!n || *n < keys[i].second) del.push_back(f.str);
    }
    if (del.size() > 2) deletes.push_back(std::move(del));
  }
  std::int64_t removed = 0;
  if (deletes.empty()) return removed;
  const std::vector<Reply> replies = x.pipeline(deletes);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (usable(replies[i], deletes[i][1], problems)) removed += replies[i].integer;
  }
  return removed;
}

std::vector<std::map<std::int64_t, HistoryCounts>> read_history(Executor& x, const std::vector<std::string>& queues,
                                                                HistoryGrain grain, std::int64_t first,
                                                                std::int64_t last) {
  std::vector<std::map<std::int64_t, HistoryCounts>> out(queues.size());
  if (last < first || queues.empty()) return out;
  std::vector<Command> reads;
  for (const std::string& q : queues) {
    Command argv{"HMGET", history_key(q, grain)};
    for (std::int64_t n = first; n <= last; ++n) argv.push_back(std::to_string(n));
    reads.push_back(std::move(argv));
  }
  const std::vector<Reply> replies = x.pipeline(reads);
  for (std::size_t q = 0; q < replies.size(); ++q) {
    usable(replies[q], reads[q][1], nullptr);
    for (std::size_t i = 0; i < replies[q].elements.size(); ++i) {
      const Reply& e = replies[q].elements[i];
      if (e.type != Reply::Type::String) continue;
      if (std::optional<HistoryCounts> c = parse_history_value(e.str)) {
        out[q].emplace(first + static_cast<std::int64_t>(i), *c);
      }
    }
  }
  return out;
}

std::vector<HistoryPoint> history_deltas(const std::map<std::int64_t, HistoryCounts>& samples) {
  std::vector<HistoryPoint> out;
  const auto up = [](std::int64_t from, std::int64_t to) { return to > from ? to - from : 0; };
  for (auto it = samples.begin(); it != samples.end(); ++it) {
    auto next = std::next(it);
    if (next == samples.end() || next->first != it->first + 1) continue;
    const HistoryCounts& a = it->second;
    const HistoryCounts& b = next->second;
    out.push_back(
        {it->first,
         {up(a.claimed, b.claimed), up(a.completed, b.completed), up(a.retried, b.retried), up(a.dead, b.dead)}});
  }
  return out;
}

}  // namespace echomq
