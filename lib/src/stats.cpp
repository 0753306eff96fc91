#include "echomq/stats.h"

#include <algorithm>

namespace echomq {

namespace {
constexpr const char* kCounters[] = {"claimed", "completed", "retried", "dead", "reaped", "released"};
constexpr std::size_t kReadsPerQueue = 7;

std::int64_t to_int(const Reply& r) {
  if (r.is_error()) throw error_from_reply("stats", r.str);
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return std::stoll(r.str);
  return 0;
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
    reads.push_back({"HGET", q.meta, "paused"});
    reads.push_back({"ZRANGE", q.pending, "0", "0"});
  }
  std::vector<Reply> r = x.pipeline(reads);
  std::vector<QueueStats> out;
  out.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const Reply* q = &r[i * kReadsPerQueue];
    QueueStats s;
    s.queue = queues[i].queue;
    s.pending = to_int(q[0]);
    s.active = to_int(q[1]);
    s.delayed = to_int(q[2]);
    s.dead = to_int(q[3]);
    for (const char* name : kCounters) s.counters[name] = 0;
    for (std::size_t k = 0; k + 1 < q[4].elements.size(); k += 2) {
      s.counters[q[4].elements[k].str] = to_int(q[4].elements[k + 1]);
    }
    s.paused = q[5].type == Reply::Type::String && q[5].str == "1";
    if (q[6].type == Reply::Type::Array && !q[6].elements.empty()) s.head_pending = q[6].elements[0].str;
    out.push_back(std::move(s));
  }
  return out;
}

QueueStats stats(Executor& x, const QueueKeys& q) { return std::move(stats(x, std::vector<QueueKeys>{q}).front()); }

void pause(Executor& x, const QueueKeys& q) {
  Reply r = x.command({"HSET", q.meta, "paused", "1"});
  if (r.is_error()) throw error_from_reply("pause", r.str);
}

void resume(Executor& x, const QueueKeys& q) {
  Reply r = x.command({"HDEL", q.meta, "paused"});
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
    out.emplace_back(r.elements[k].str, static_cast<std::int64_t>(std::stod(r.elements[k + 1].str)));
  }
  return out;
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
