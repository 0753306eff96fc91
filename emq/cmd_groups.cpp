// emq groups QUEUE [--limit N] [--json]: a queue's groups, largest backlogs
// first; emq group set|pause|resume QUEUE GROUP: a group's policy, through
// group_set (docs/protocol.md, "Groups").
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/groups.h"
#include "group_change.h"
#include "limit_change.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr std::int64_t kMaxGroupsShown = 1000;

struct GroupsArgs {
  std::string queue;
  std::int64_t limit = 20;
  bool json = false;
};

struct GroupArgs {
  std::string queue;
  std::string group;
  bool fallback = false;  // --default: the `*` policy
  std::string weight;
  std::string max_active;
  std::string rate;
  bool reset = false;
};

std::string rate_text(const std::optional<RateLimit>& r) {
  return r ? std::to_string(r->max) + "/" + std::to_string(r->window_ms) + "ms" : "-";
}

// Where the group stands: paused and broken first, as claim sees them.
std::string place_of(const GroupState& s) {
  if (!s.policy) return "broken";
  if (s.policy->paused) return "paused";
  return std::string(place_name(s.place));
}

nlohmann::ordered_json policy_json(const GroupPolicy& p) {
  nlohmann::ordered_json j;
  j["weight"] = p.weight;
  j["max_active"] = p.max_active ? nlohmann::ordered_json(*p.max_active) : nullptr;
  j["rate"] = p.rate ? nlohmann::ordered_json{{"max", p.rate->max}, {"window_ms", p.rate->window_ms}} : nullptr;
  j["paused"] = p.paused;
  return j;
}

nlohmann::ordered_json group_json(const GroupState& s) {
  nlohmann::ordered_json j;
  j["group"] = s.name;
  j["pending"] = s.pending;
  j["active"] = s.active;
  j["own_policy"] = s.own_policy ? nlohmann::ordered_json(*s.own_policy) : nullptr;
  j["policy"] = s.policy ? policy_json(*s.policy) : nullptr;
  j["broken"] = s.policy ? nullptr : nlohmann::ordered_json(s.broken);
  j["place"] = place_of(s);
  j["turn"] = s.turn && place_of(s) == "rotation" ? nlohmann::ordered_json(*s.turn) : nullptr;
  return j;
}

// "tenants: 12 groups holding keys, 57 jobs pending in them, 3 in the
// rotation; default policy weight 1 (the 10 largest backlogs shown)"
std::string totals_line(const QueueKeys& q, const GroupsView& v) {
  const std::optional<GroupPolicy> d = parse_group_policy(v.default_policy);
  std::string t = q.queue + ": " + std::to_string(v.groups) + (v.groups == 1 ? " group" : " groups") +
                  " holding keys, " + std::to_string(v.grouped_pending) + " jobs pending in them, " +
                  std::to_string(v.rotation) + " in the rotation; default policy " +
                  (d ? describe(*d) : "broken (" + v.default_policy + "): emq group set " + q.queue + " --default");
  if (v.more) {
    t += v.top.size() == 1 ? " (the largest backlog shown: --limit)"
                           : " (the " + std::to_string(v.top.size()) + " largest backlogs shown: --limit)";
  }
  return t;
}

int run_groups(Tool& tool, const GroupsArgs& a) {
  QueueKeys q(a.queue);
  if (a.limit < 1 || a.limit > kMaxGroupsShown) {
    throw Error(ErrorKind::Invalid, "groups",
                "--limit " + std::to_string(a.limit) + " is out of range: use 1.." + std::to_string(kMaxGroupsShown));
  }
  Executor x(tool.options());
  const GroupsView v = read_groups(x, q, static_cast<std::size_t>(a.limit));
  if (a.json) {
    nlohmann::ordered_json out;
    out["queue"] = q.queue;
    out["groups"] = v.groups;
    out["grouped_pending"] = v.grouped_pending;
    out["rotation"] = v.rotation;
    out["default_policy"] = v.default_policy;
    out["policies"] = v.policies;
    out["more"] = v.more;
    out["top"] = nlohmann::ordered_json::array();
    for (const GroupState& s : v.top) out["top"].push_back(group_json(s));
    std::cout << out.dump() << '\n';
    return kExitOk;
  }
  if (!v.top.empty()) {
    Table t({{"GROUP"},
             {"PENDING", true},
             {"ACTIVE", true},
             {"WEIGHT", true},
             {"MAX_ACTIVE", true},
             {"RATE"},
             {"POLICY"},
             {"PLACE"},
             {"TURN", true}});
    for (const GroupState& s : v.top) {
      const bool ok = s.policy.has_value();
      t.add({s.name, std::to_string(s.pending), std::to_string(s.active), ok ? std::to_string(s.policy->weight) : "?",
             ok && s.policy->max_active ? std::to_string(*s.policy->max_active)
             : ok                       ? "-"
                                        : "?",
             ok ? rate_text(s.policy->rate) : "?", s.own_policy ? "own" : "default", place_of(s),
             s.turn && place_of(s) == "rotation" ? std::to_string(*s.turn) : "-"});
    }
    t.print(std::cout);
  }
  std::cout << totals_line(q, v) << '\n';
  for (const GroupState& s : v.top) {
    if (!s.policy) {
      say("group " + s.name + "'s policy is broken (" + s.broken + "): claim serves none of its jobs; set it again " +
          "(emq group set " + q.queue + " " + s.name + " ...)");
    }
  }
  return kExitOk;
}

// The queue's group from the arguments: GROUP, `*`, or --default.
std::string group_of(const GroupArgs& a) {
  if (a.fallback && !a.group.empty()) {
    throw Error(ErrorKind::Invalid, "group", "give GROUP or --default, not both");
  }
  if (!a.fallback && a.group.empty()) {
    throw Error(ErrorKind::Invalid, "group", "give the GROUP, or --default for the default policy");
  }
  return a.fallback ? "*" : a.group;
}

void print_written(const QueueKeys& q, const std::string& g, const GroupWritten& w) {
  if (!w.was_broken.empty()) say("note: the policy read was broken (" + w.was_broken + "); what is not set now is off");
  if (g == "*") {
    std::cout << "default policy of " << q.queue << ": " << describe(w.now) << '\n';
    return;
  }
  std::cout << "group " << g << " of " << q.queue << ": " << describe(w.now)
            << (w.own ? " (its own policy)" : " (the default policy)")
            << (w.in_rotation && !w.now.paused ? "; in the rotation" : "") << '\n';
}

int run_set(Tool& tool, const GroupArgs& a) {
  QueueKeys q(a.queue);
  const std::string g = group_of(a);
  // The values are checked before the server is asked anything.
  GroupChange change;
  change.reset = a.reset;
  if (!a.weight.empty()) change.weight = weight_of(a.weight, "--weight");
  if (!a.max_active.empty()) change.max_active.emplace(max_active_of(a.max_active, "--max-active"));
  if (!a.rate.empty()) change.rate.emplace(rate_of(a.rate, "--rate"));
  if (!a.reset && a.weight.empty() && a.max_active.empty() && a.rate.empty()) {
    throw Error(ErrorKind::Invalid, "group set",
                "give --weight, --max-active, --rate or --reset (emq groups " + q.queue + " shows the groups)");
  }
  Executor x(tool.options());
  const GroupWritten w = change_group(x, q, g, change);
  warn_if_unknown(x, q);
  print_written(q, g, w);
  return kExitOk;
}

int run_pause(Tool& tool, const GroupArgs& a, bool pause) {
  QueueKeys q(a.queue);
  GroupChange change;
  change.paused = pause;
  Executor x(tool.options());
  const GroupWritten w = change_group(x, q, a.group, change);
  warn_if_unknown(x, q);
  print_written(q, a.group, w);
  return kExitOk;
}

void add_group_target(CLI::App* sub, GroupArgs& a) {
  sub->add_option("queue", a.queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("group", a.group, "the group: 1-128 bytes of A-Z a-z 0-9 _ . : -")->required()->type_name("GROUP");
}

}  // namespace

void add_groups(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<GroupsArgs>();
  CLI::App* sub = app.add_subcommand("groups", "a queue's groups, largest backlogs first: counts, policy, place");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  add_number_option(sub, "--limit", a->limit, "groups shown, 1..1000 (default 20)")->type_name("N");
  sub->add_flag("--json", a->json, "print one JSON object");
  sub->footer(
      "PLACE: rotation (served in its turn, TURN 1 the head), capped (out until one of its jobs ends), no tokens\n"
      "(out until its rate's next token), paused, broken, or out (nothing pending). After the groups\n"
      "holding keys come those with a policy of their own and no jobs yet (emq group set|pause), at 0.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_groups(tool, *a); }; });

  CLI::App* group = app.add_subcommand("group", "set, pause or resume one group's policy");
  auto s = std::make_shared<GroupArgs>();
  CLI::App* set = group->add_subcommand("set", "change a group's policy (or the default's), for every daemon at once");
  set->add_option("queue", s->queue, "the queue")->required()->type_name("QUEUE");
  set->add_option("group", s->group, "the group, or * for the default policy")->type_name("GROUP");
  set->add_flag("--default", s->fallback, "the default policy (the same as GROUP *)");
  set->add_option("--weight", s->weight, "claims per turn of the rotation, 1..1000")->type_name("N");
  set->add_option("--max-active", s->max_active, "the group's jobs holding a lease at once, or off")
      ->type_name("N|off");
  set->add_option("--rate", s->rate, "the group's claims per period, e.g. 100/1s, or off")->type_name("N/PERIOD|off");
  set->add_flag("--reset", s->reset, "delete the group's own policy: it runs by the default");
  set->footer(
      "What is not given stays as the group runs now (its own policy, else the default's). A changed rate\n"
      "starts a full bucket. A daemon whose config has groups: writes them again at its start.");
  set->callback([&tool, s] { tool.run = [&tool, s] { return run_set(tool, *s); }; });

  for (const bool pause : {true, false}) {
    auto p = std::make_shared<GroupArgs>();
    CLI::App* cmd = group->add_subcommand(pause ? "pause" : "resume",
                                          pause ? "hold a group: claim serves none of its jobs until resumed"
                                                : "let a held group's jobs be claimed again");
    add_group_target(cmd, *p);
    cmd->callback([&tool, p, pause] { tool.run = [&tool, p, pause] { return run_pause(tool, *p, pause); }; });
  }
}

}  // namespace echomq::cli
