// emq stats [QUEUE...] [--json]
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "echomq/limits.h"
#include "echomq/stats.h"
#include "bytes_text.h"
#include "output.h"
#include "pause_view.h"
#include "tool.h"

namespace echomq::cli {

namespace {

// The counters of emq:{q}:stats, in the order the table shows them. In the
// table the "dead" counter is headed DIED, apart from the DEAD depth.
constexpr const char* kCounters[] = {"claimed", "completed", "retried", "dead", "reaped", "released"};
// Unique enqueues that found their key held (docs/protocol.md, "Unique
// jobs"): in --json's counters, and in a line below the table for a queue
// that has any, so the table keeps its shape.
constexpr const char* kUniqueCounters[] = {"duplicates", "replaced"};

struct StatsArgs {
  std::vector<std::string> queues;
  bool json = false;
};

// nullopt: the field holds something that is not a counter (a problem).
std::optional<std::int64_t> counter(const QueueStats& s, const char* name) {
  auto it = s.counters.find(name);
  if (it == s.counters.end()) return std::nullopt;
  return it->second;
}

// Why the queue's limits hold it now (limits.h, limit_status), "" if not
// (nor when they are broken: `limits` already says so).
std::string held_back(const QueueStats& s, std::int64_t now_ms) {
  if (s.limits.empty()) return "";
  const LimitStatus l = limit_status(s.limit_fields, s.active, now_ms);
  return l.limits ? l.held_back : "";
}

void print_json(const std::vector<QueueStats>& all, std::int64_t now_ms) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const QueueStats& s : all) {
    nlohmann::ordered_json counters = nlohmann::ordered_json::object();
    auto put = [&](const char* name) {
      auto v = counter(s, name);
      counters[name] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    for (const char* name : kCounters) put(name);
    for (const char* name : kUniqueCounters) put(name);
    nlohmann::ordered_json q = {{"queue", s.queue},     {"paused", s.paused},   {"pending", s.pending},
                                {"active", s.active},   {"delayed", s.delayed}, {"dead", s.dead},
                                {"waiting", s.waiting}, {"counters", counters}};
    q["pause"] = pause_json(s, now_ms);
    // Only when another writer broke a field: the usual shape stays as it was.
    if (!s.problems.empty()) q["problems"] = s.problems;
    if (!s.limits.empty()) {  // only for a queue that has them
      q["limits"] = s.limits;
      const std::string why = held_back(s, now_ms);
      q["held_back"] = why.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why);
    }
    out.push_back(std::move(q));
  }
  std::cout << out.dump(2) << '\n';
}

void print_table(const std::vector<QueueStats>& all, std::int64_t now_ms) {
  Table t({{"QUEUE", false},
           {"PAUSED", false},
           {"PENDING", true},
           {"ACTIVE", true},
           {"DELAYED", true},
           {"DEAD", true},
           {"WAITING", true},
           {"CLAIMED", true},
           {"COMPLETED", true},
           {"RETRIED", true},
           {"DIED", true},
           {"REAPED", true},
           {"RELEASED", true}});
  for (const QueueStats& s : all) {
    std::vector<std::string> row = {s.queue,
                                    s.paused ? "yes" : "no",
                                    std::to_string(s.pending),
                                    std::to_string(s.active),
                                    std::to_string(s.delayed),
                                    std::to_string(s.dead),
                                    std::to_string(s.waiting)};
    for (const char* name : kCounters) {
      auto v = counter(s, name);
      row.push_back(v ? std::to_string(*v) : "?");
    }
    t.add(std::move(row));
  }
  t.print(std::cout);
  // Below the table, only for queues that have them: the usual shape stays.
  for (const QueueStats& s : all) {
    if (s.paused) std::cout << "paused " << s.queue << " " << terminal_text(describe_pause(s, now_ms)) << '\n';
  }
  for (const QueueStats& s : all) {
    const std::int64_t duplicates = counter(s, "duplicates").value_or(0), replaced = counter(s, "replaced").value_or(0);
    if (duplicates > 0 || replaced > 0) {
      std::cout << "unique keys of " << s.queue << ": " << duplicates << " duplicates, " << replaced << " replaced\n";
    }
  }
  for (const QueueStats& s : all) {
    if (s.limits.empty()) continue;
    const std::string why = held_back(s, now_ms);
    std::cout << "limits of " << s.queue << ": " << terminal_text(s.limits + (why.empty() ? "" : "; held back: " + why))
              << '\n';
  }
}

int run_stats(Tool& tool, const StatsArgs& a) {
  std::vector<QueueKeys> keys;
  for (const std::string& name : a.queues) keys.emplace_back(name);  // checks each name first
  Executor x(tool.options());
  std::vector<QueueStats> all;
  if (keys.empty()) {
    Overview o = overview(x);
    // A peer may have registered a name this tool would refuse; it is
    // skipped rather than refusing to show the others.
    for (const std::string& name : o.skipped) {
      say("skipping '" + name.substr(0, 80) + "' in " + std::string(kQueuesKey) + ": not a valid queue name");
    }
    all = std::move(o.queues);
    if (all.empty()) {
      if (a.json) {
        std::cout << "[]\n";
        return kExitOk;
      }
      say("no queues are known yet (" + std::string(kQueuesKey) + " is empty); name them: emq stats QUEUE...");
      return kExitOk;
    }
  } else {
    all = stats(x, keys);
  }
  const std::int64_t now = x.server_time_ms();  // after the stats, as claim would see them next
  if (a.json) {
    print_json(all, now);
  } else {
    print_table(all, now);
  }
  // On stderr, so that stdout stays the table; the other fields are shown.
  for (const QueueStats& s : all) {
    for (const std::string& p : s.problems) {
      say("queue " + s.queue + ": " + p + " (another writer broke it; its value is not shown)");
    }
  }
  return kExitOk;
}

}  // namespace

void add_stats(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("stats", "depth per state and counters per queue");
  add_queue_list_options(sub, a->queues, a->json, "queue");
  sub->footer(
      "Columns: PENDING ACTIVE DELAYED DEAD are the jobs in each state now; CLAIMED COMPLETED RETRIED\n"
      "DIED REAPED RELEASED count transitions since the queue began (DIED is the 'dead' counter).");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_stats(tool, *a); }; });
}

}  // namespace echomq::cli
