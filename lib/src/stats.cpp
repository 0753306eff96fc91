#include "echomq/stats.h"

#include <algorithm>

#include "echomq/bytes.h"
#include "echomq/job_id.h"
#include "echomq/limits.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {
constexpr const char* kCounters[] = {"claimed", "completed", "retried",    "dead",
                                     "reaped",  "released",  "duplicates", "replaced"};
constexpr std::size_t kReadsPerQueue = 11;

// An integer reply, or an integer in a string reply; nullopt and a line in
// `problems` for anything else another writer may have left there.
std::optional<std::int64_t> int_of(const Reply& r, const std::string& what, std::vector<std::string>& problems) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.is_error()) {
    // A transient refusal (LOADING) is the server's state, not the data's.
    Error e = error_from_reply("stats", r.str);
    if (e.transient()) throw e;
    problems.push_back(what + ": " + r.str.substr(0, 120));
    return std::nullopt;
  }
  if (r.type == Reply::Type::String) {
    if (std::optional<std::int64_t> v = whole_number(r.str)) return v;
    problems.push_back(what + " holds '" + r.str.substr(0, 40) + "', not an integer");
    return std::nullopt;
  }
  return 0;
}
constexpr std::int64_t kMaxPausedUntil = 1'000'000'000'000'000;

std::optional<std::int64_t> until_of(const std::string& v) { return server_integer_in(v, 0, kMaxPausedUntil); }

// HMGET meta paused paused_by paused_reason paused_until.
void read_pause(const Reply& r, QueueStats& s) {
  if (r.type != Reply::Type::Array || r.elements.size() != 4) return;
  const auto text = [&](std::size_t i) {
    return r.elements[i].type == Reply::Type::String ? std::optional<std::string>(r.elements[i].str) : std::nullopt;
  };
  s.paused = text(0) == std::optional<std::string>("1");
  s.pause.by = text(1).value_or("");
  s.pause.reason = text(2).value_or("");
  if (const std::optional<std::string> until = text(3)) {
    s.pause.until_ms = until_of(*until);
    if (!s.pause.until_ms) s.pause.broken_until = until->substr(0, 40);
  }
}
}  // namespace

std::vector<QueueStats> stats(Executor& x, const std::vector<QueueKeys>& queues) {
  std::vector<Command> reads;
  reads.reserve(queues.size() * kReadsPerQueue);
  for (const QueueKeys& q : queues) {
    reads.push_back({"ZCARD", q.pending});
    reads.push_back({"ZCARD", q.active});
    reads.push_back({"ZCARD", q.delayed});
    reads.push_back({"ZCARD", q.dead});
    reads.push_back({"HGETALL", q.stats});
    reads.push_back({"HMGET", q.meta, "paused", "paused_by", "paused_reason", "paused_until"});
    reads.push_back({"ZRANGE", q.pending, "0", "0"});
    reads.push_back(limit_fields_read(q));
    reads.push_back({"ZCARD", q.waiting});
    reads.push_back({"ZSCORE", q.gidx, "*"});
    reads.push_back({"ZCARD", q.gidx});
  }
  std::vector<Reply> r = x.pipeline(reads);
  std::vector<QueueStats> out;
  out.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const Reply* q = &r[i * kReadsPerQueue];
    QueueStats s;
    s.queue = queues[i].queue;
    const QueueKeys& k = queues[i];
    s.pending = int_of(q[0], k.pending, s.problems).value_or(0);
    s.active = int_of(q[1], k.active, s.problems).value_or(0);
    s.delayed = int_of(q[2], k.delayed, s.problems).value_or(0);
    s.dead = int_of(q[3], k.dead, s.problems).value_or(0);
    // Grouped jobs wait in their groups' zsets; gidx's * is their sum.
    s.grouped_pending = int_of(q[9], k.gidx + " *", s.problems).value_or(0);
    s.pending += s.grouped_pending;
    // gidx holds each group that holds keys, and * while any job waits.
    s.groups = int_of(q[10], k.gidx, s.problems).value_or(0) - (q[9].is_nil() || q[9].is_error() ? 0 : 1);
    for (const char* name : kCounters) s.counters[name] = 0;
    if (q[4].is_error()) int_of(q[4], k.stats, s.problems);
    for (std::size_t f = 0; f + 1 < q[4].elements.size(); f += 2) {
      const std::string& name = q[4].elements[f].str;
      std::optional<std::int64_t> v = int_of(q[4].elements[f + 1], k.stats + " " + name, s.problems);
      if (v) {
        s.counters[name] = *v;
      } else {
        s.counters.erase(name);
      }
    }
    if (q[5].is_error()) int_of(q[5], k.meta, s.problems);
    read_pause(q[5], s);
    if (q[6].type == Reply::Type::Array && !q[6].elements.empty()) {
      s.head_pending = q[6].elements[0].str;
      if (auto ms = minted_at_ms(*s.head_pending)) s.head_pending_since_ms = static_cast<std::int64_t>(*ms);
    }
    if (!q[7].is_error()) {
      s.limit_fields = decode_limit_fields(q[7]);
      std::string broken;
      const std::optional<QueueLimits> l = s.limit_fields.limits(&broken);
      s.limits = !l ? "broken: " + broken : *l == QueueLimits{} ? "" : describe(*l);
    }
    s.waiting = int_of(q[8], k.waiting, s.problems).value_or(0);
    out.push_back(std::move(s));
  }
  return out;
}

QueueStats stats(Executor& x, const QueueKeys& q) { return std::move(stats(x, std::vector<QueueKeys>{q}).front()); }

void pause(Executor& x, const QueueKeys& q, const PauseRequest& how) {
  if (how.by.size() > kPausedByMax) {
    throw Error(ErrorKind::Invalid, "pause",
                "who paused is " + std::to_string(how.by.size()) + " bytes; at most " + std::to_string(kPausedByMax));
  }
  if (how.reason.size() > kPausedReasonMax) {
    throw Error(
        ErrorKind::Invalid, "pause",
        "the reason is " + std::to_string(how.reason.size()) + " bytes; at most " + std::to_string(kPausedReasonMax));
  }
  // Shown by every tool that finds the queue paused: a control character
  // there would act on the reader's terminal.
  const auto plain = [](const std::string& text, const char* what) {
    if (is_plain_text(text)) return;
    throw Error(ErrorKind::Invalid, "pause",
                std::string(what) + " holds a control character or bytes that are not UTF-8: write plain text");
  };
  plain(how.by, "who paused");
  plain(how.reason, "the reason");
  Command set{"HSET", q.meta, "paused", "1"};
  Command clear{"HDEL", q.meta};
  const auto put = [&](const char* field, const std::string& value) {
    if (value.empty()) {
      clear.push_back(field);
    } else {
      set.insert(set.end(), {field, value});
    }
  };
  put("paused_by", how.by);
  put("paused_reason", how.reason);
  std::string until;
  if (how.for_ms) {
    const std::int64_t now = x.server_time_ms();
    if (*how.for_ms < 1 || *how.for_ms > kMaxPausedUntil - now) {
      throw Error(ErrorKind::Invalid, "pause", "a pause's length must be at least 1 ms and end before 10^15 ms");
    }
    until = std::to_string(now + *how.for_ms);
  }
  put("paused_until", until);
  // The old fields go first: between the two, the queue is at most paused
  // with no end, never lifted early by an end of an earlier pause.
  std::vector<Command> writes;
  if (clear.size() > 2) writes.push_back(std::move(clear));
  writes.push_back(std::move(set));
  for (const Reply& r : x.pipeline(writes)) {
    if (r.is_error()) throw error_from_reply("pause", r.str);
  }
}

void resume(Executor& x, const QueueKeys& q) {
  Reply r = x.command({"HDEL", q.meta, "paused", "paused_by", "paused_reason", "paused_until"});
  if (r.is_error()) throw error_from_reply("resume", r.str);
}

std::optional<JobRow> inspect(Executor& x, const QueueKeys& q, std::string_view id) {
  Reply r = x.command({"HGETALL", q.row(id)});
  if (r.is_error()) throw error_from_reply("inspect", r.str);
  if (r.elements.empty()) return std::nullopt;
  JobRow row;
  row.id = std::string(id);
  for (std::size_t k = 0; k + 1 < r.elements.size(); k += 2) {
    row.fields[r.elements[k].str] = std::move(r.elements[k + 1].str);
  }
  return row;
}

std::vector<std::pair<std::string, std::int64_t>> list_dead(Executor& x, const QueueKeys& q, std::int64_t limit) {
  Reply r = x.command({"ZRANGE", q.dead, "0", std::to_string(std::max<std::int64_t>(limit, 1) - 1), "WITHSCORES"});
  if (r.is_error()) throw error_from_reply("dead list", r.str);
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t k = 0; k + 1 < r.elements.size(); k += 2) {
    // A score another writer made inf (or no number) reads as 0.
    const std::optional<double> score = decimal_number(r.elements[k + 1].str);
    out.emplace_back(r.elements[k].str, score ? static_cast<std::int64_t>(*score) : 0);
  }
  return out;
}

Overview overview(Executor& x) {
  Overview o;
  std::vector<QueueKeys> keys;
  for (std::string& name : known_queues(x)) {
    if (valid_queue_name(name)) {
      keys.emplace_back(name);
    } else {
      o.skipped.push_back(std::move(name));
    }
  }
  if (!keys.empty()) o.queues = stats(x, keys);
  return o;
}

std::vector<std::string> known_queues(Executor& x) {
  Reply r = x.command({"SMEMBERS", std::string(kQueuesKey)});
  if (r.is_error()) throw error_from_reply("queues", r.str);
  std::vector<std::string> names;
  for (const Reply& e : r.elements) names.push_back(e.str);
  std::sort(names.begin(), names.end());
  return names;
}

void register_queues(Executor& x, const std::vector<std::string>& names) {
  if (names.empty()) return;
  Command argv{"SADD", std::string(kQueuesKey)};
  argv.insert(argv.end(), names.begin(), names.end());
  Reply r = x.command(argv);
  if (r.is_error()) throw error_from_reply("queues", r.str);
}

}  // namespace echomq
