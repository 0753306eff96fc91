#include "meta_publisher.h"

#include <spdlog/spdlog.h>

#include <map>

#include "echomq/events.h"
#include "echomq/groups.h"
#include "echomq/limits.h"
#include "echomq/transitions.h"

namespace echomq::daemon {

namespace {

std::string shown(std::int64_t length) { return length > 0 ? std::to_string(length) : "off"; }

// Writes what differs. A write meta refuses (another writer's type) is
// warned of; server trouble is thrown, for the start to retry.
void write_what_differs(Executor& x, const std::vector<Command>& writes, const char* op, const char* what) {
  if (writes.empty()) return;
  for (const Reply& r : x.pipeline(writes)) {
    if (!r.is_error()) continue;
    Error e = error_from_reply(op, r.str);
    if (e.transient()) throw e;
    spdlog::warn("cannot write a queue's {} to its meta: {}", what, r.str);
  }
}

// Warned of, not thrown: the policy is read by tools alone.
void publish_policy(Executor& x, const std::vector<QueueConfig>& queues) {
  std::vector<Command> publish;
  for (const QueueConfig& q : queues) {
    publish.push_back({"HSET", QueueKeys(q.name).meta, "max_attempts", std::to_string(q.max_attempts), "lease_ms",
                       std::to_string(q.lease_ms), "keep_completed_ms", std::to_string(q.keep_completed_s * 1000)});
  }
  for (const Reply& r : x.pipeline(publish)) {
    if (r.is_error()) spdlog::warn("cannot publish queue policy: {}", r.str);
  }
}

void write_limits(Executor& x, const std::vector<QueueConfig>& queues) {
  std::vector<const QueueConfig*> limited;
  std::vector<Command> reads;
  for (const QueueConfig& q : queues) {
    if (!q.limits) continue;
    limited.push_back(&q);
    reads.push_back(limit_fields_read(QueueKeys(q.name)));
  }
  if (reads.empty()) return;
  std::vector<Reply> held = x.pipeline(reads);
  std::vector<Command> writes;
  for (std::size_t i = 0; i < limited.size(); ++i) {
    const QueueConfig& q = *limited[i];
    const LimitFields fields = decode_limit_fields(held[i]);
    std::string broken;
    const std::optional<QueueLimits> was = fields.limits(&broken);
    if (was && *was == *q.limits) continue;
    if (!was) {
      spdlog::warn("queue={} its limits in meta were broken ({}); now {} (from the config)", q.name, broken,
                   describe(*q.limits));
    } else if (*was != QueueLimits{}) {
      spdlog::warn("queue={} its limits in meta were {}; now {} (from the config)", q.name, describe(*was),
                   describe(*q.limits));
    }
    for (Command& c : limits_write(QueueKeys(q.name), was.value_or(QueueLimits{}), *q.limits)) {
      writes.push_back(std::move(c));
    }
  }
  write_what_differs(x, writes, "limits", "limits");
}

// The policies `groups:` names, as group_set takes them: `*` the default
// ("" for all defaults: no field), each group its own. A group's own
// policy is never "": that would delete it, and the group would run by the
// default, which it replaces whole.
std::map<std::string, std::string> policies_of(const QueueGroups& g) {
  std::map<std::string, std::string> out;
  if (const std::string d = policy_text(g.fallback); !d.empty()) out["*"] = d;
  for (const auto& [name, p] : g.overrides) {
    const std::string t = policy_text(p);
    out[name] = t.empty() ? "weight=1" : t;
  }
  return out;
}

std::string whose(const std::string& g) { return g == "*" ? "the default policy" : "group " + g + "'s policy"; }

// What the hash holds beyond the config is deleted (back to the default),
// as `limits:` turns off what it leaves out; each change is logged with
// the old and the new. Each write is a group_set, so a group it lets run
// goes back to the rotation at once.
void write_groups(Executor& x, const std::vector<QueueConfig>& queues) {
  std::vector<const QueueConfig*> grouped;
  std::vector<Command> reads;
  for (const QueueConfig& q : queues) {
    if (!q.groups) continue;
    grouped.push_back(&q);
    reads.push_back({"HGETALL", QueueKeys(q.name).groups});
  }
  if (reads.empty()) return;
  const std::vector<Reply> held = x.pipeline(reads);
  for (std::size_t i = 0; i < grouped.size(); ++i) {
    const QueueConfig& q = *grouped[i];
    const QueueKeys keys(q.name);
    if (held[i].is_error()) {
      spdlog::warn("queue={} cannot read {} ({}); its groups are not written", q.name, keys.groups, held[i].str);
      continue;
    }
    std::map<std::string, std::string> was;
    for (std::size_t e = 0; e + 1 < held[i].elements.size(); e += 2) {
      was[held[i].elements[e].str] = held[i].elements[e + 1].str;
    }
    const std::map<std::string, std::string> want = policies_of(*q.groups);
    auto set = [&](const std::string& g, const std::string& text) {
      try {
        group_set(x, keys, g, text);
      } catch (const Error& e) {
        if (e.transient()) throw;
        spdlog::warn("queue={} cannot write group {}'s policy: {}", q.name, g, e.what());
      }
    };
    for (const auto& [g, text] : was) {
      if (want.count(g) != 0) continue;
      spdlog::warn("queue={} {} was \"{}\", which the config does not name; deleted: {}", q.name, whose(g), text,
                   g == "*" ? "all defaults" : "it runs by the default");
      set(g, "");
    }
    for (const auto& [g, text] : want) {
      const auto it = was.find(g);
      if (it != was.end() && it->second == text) continue;
      if (it != was.end()) {
        spdlog::warn("queue={} {} was \"{}\"; now \"{}\" (from the config)", q.name, whose(g), it->second, text);
      }
      set(g, text);
    }
  }
}

void publish_events(Executor& x, const std::vector<QueueConfig>& queues) {
  if (queues.empty()) return;
  std::vector<Command> reads;
  reads.reserve(queues.size());
  for (const QueueConfig& q : queues) reads.push_back(events_read(QueueKeys(q.name)));
  const std::vector<Reply> held = x.pipeline(reads);
  std::vector<Command> writes;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const QueueConfig& q = queues[i];
    if (x.options().events) x.options().events->learnt(q.name, q.events);
    // Absent or broken in meta, either reads as off: rewritten either way.
    const bool same = decode_events(held[i]) == q.events && (q.events > 0 || held[i].is_nil());
    if (same) continue;
    if (!held[i].is_nil()) {
      spdlog::info("queue={} events in meta were {}; now {} (from the config)", q.name,
                   held[i].type == Reply::Type::String ? held[i].str : std::string("unreadable"), shown(q.events));
    }
    writes.push_back(events_write(QueueKeys(q.name), q.events));
  }
  write_what_differs(x, writes, "events", "events length");
}

}  // namespace

void publish_queue_meta(Executor& x, const std::vector<QueueConfig>& queues) {
  publish_policy(x, queues);
  write_limits(x, queues);
  write_groups(x, queues);
  publish_events(x, queues);
}

}  // namespace echomq::daemon
