#include "echomq/groups.h"

#include <algorithm>
#include <functional>
#include <set>

#include "echomq/whole_number.h"

namespace echomq {

namespace {

struct Range {
  const char* name;
  std::int64_t lo, hi;
  const char* words;
};
constexpr Range kRanges[] = {{"weight", 1, kMaxGroupWeight, "1..1000"},
                             {"max_active", 1, kMaxActiveLimit, "1..1000000"},
                             {"rate_max", 1, kMaxActiveLimit, "1..1000000"},
                             {"rate_window_ms", 1, kMaxWindowMs, "1..86400000"}};

std::int64_t count_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return whole_number(r.str).value_or(0);
  return 0;
}

std::optional<std::string> text_of(const Reply& r) {
  if (r.type == Reply::Type::String) return r.str;
  return std::nullopt;
}

// The four reads of one group, pipelined by its caller.
void add_group_reads(std::vector<Command>& out, const QueueKeys& q, const std::string& g) {
  out.push_back({"ZCARD", q.gact_root + g});
  out.push_back({"HGET", q.groups, g});
  out.push_back({"HGET", q.grp_root + g, "in"});
  out.push_back({"LPOS", q.rot, g, "MAXLEN", std::to_string(kTurnsLooked)});
}

GroupState group_from(std::string name, std::int64_t pending, const Reply* r, const std::string& default_text) {
  GroupState s;
  s.name = std::move(name);
  s.pending = pending;
  s.active = count_of(r[0]);
  s.own_policy = text_of(r[1]);
  s.policy = parse_group_policy(s.own_policy.value_or(default_text), &s.broken);
  const std::string in = text_of(r[2]).value_or("");
  s.place = in == "rot"    ? GroupPlace::Rotation
            : in == "cap"  ? GroupPlace::Capped
            : in == "rate" ? GroupPlace::NoTokens
                           : GroupPlace::Out;
  if (r[3].type == Reply::Type::Integer) s.turn = r[3].integer + 1;
  return s;
}

// The groups with a policy of their own that are not in `keyed` (all of
// gidx), names descending, at most `room`: one HKEYS, which its caller
// sends only for a queue with at most kPoliciesLooked policies.
std::vector<std::string> idle_policies(Executor& x, const QueueKeys& q, const std::set<std::string>& keyed,
                                       std::size_t room) {
  std::vector<std::string> idle;
  for (const Reply& field : x.pipeline({{"HKEYS", q.groups}}).front().elements) {
    if (valid_group_name(field.str) && keyed.count(field.str) == 0) idle.push_back(field.str);
  }
  std::sort(idle.begin(), idle.end(), std::greater<>());
  if (idle.size() > room) idle.resize(room);
  return idle;
}

}  // namespace

std::optional<GroupPolicy> parse_group_policy(std::string_view text, std::string* why) {
  std::optional<std::int64_t> numbers[4];
  bool paused = false;
  // One name=value field into numbers or paused; what is wrong with it, or "".
  auto take = [&](std::string_view field) -> std::string {
    const std::size_t eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0) return "policy must be name=value fields separated by spaces";
    const std::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
    if (name == "paused") {
      if (paused) return "policy field paused is given twice";
      paused = true;
      return value == "1" ? "" : "paused must be 1";
    }
    for (std::size_t i = 0; i < 4; ++i) {
      if (name != kRanges[i].name) continue;
      if (numbers[i]) return "policy field " + std::string(name) + " is given twice";
      numbers[i] = server_integer_in(value, kRanges[i].lo, kRanges[i].hi);
      return numbers[i] ? "" : std::string(name) + " must be an integer in " + kRanges[i].words;
    }
    return "unknown policy field " + std::string(name.substr(0, 64));
  };
  std::string wrong;
  for (std::size_t at = 0; !text.empty() && wrong.empty();) {
    const std::size_t space = text.find(' ', at);
    wrong = take(text.substr(at, space == std::string_view::npos ? std::string_view::npos : space - at));
    if (space == std::string_view::npos) break;
    at = space + 1;
  }
  if (wrong.empty() && numbers[2] && !numbers[3]) wrong = "rate_max must be set with rate_window_ms";
  if (wrong.empty() && numbers[3] && !numbers[2]) wrong = "rate_window_ms must be set with rate_max";
  if (!wrong.empty()) {
    if (why != nullptr) *why = wrong;
    return std::nullopt;
  }
  GroupPolicy p;
  p.weight = numbers[0].value_or(1);
  p.max_active = numbers[1];
  if (numbers[2]) p.rate = RateLimit{*numbers[2], *numbers[3]};
  p.paused = paused;
  return p;
}

std::string policy_text(const GroupPolicy& p) {
  std::string t;
  auto add = [&](const std::string& field) { t += (t.empty() ? "" : " ") + field; };
  if (p.weight != 1) add("weight=" + std::to_string(p.weight));
  if (p.max_active) add("max_active=" + std::to_string(*p.max_active));
  if (p.rate) {
    add("rate_max=" + std::to_string(p.rate->max));
    add("rate_window_ms=" + std::to_string(p.rate->window_ms));
  }
  if (p.paused) add("paused=1");
  return t;
}

std::string describe(const GroupPolicy& p) {
  std::string t = "weight " + std::to_string(p.weight);
  if (p.max_active) t += ", max_active " + std::to_string(*p.max_active);
  if (p.rate) t += ", rate " + std::to_string(p.rate->max) + "/" + std::to_string(p.rate->window_ms) + "ms";
  if (p.paused) t += ", paused";
  return t;
}

std::string_view place_name(GroupPlace p) {
  switch (p) {
    case GroupPlace::Rotation: return "rotation";
    case GroupPlace::Capped: return "capped";
    case GroupPlace::NoTokens: return "no tokens";
    case GroupPlace::Out: break;
  }
  return "out";
}

GroupsView read_groups(Executor& x, const QueueKeys& q, std::size_t limit, IdleGroups idle_groups) {
  // `*` (the sum of the counts) is always the largest member: one more.
  std::vector<Command> first{{"ZCARD", q.gidx},
                             {"ZSCORE", q.gidx, "*"},
                             {"LLEN", q.rot},
                             {"HGET", q.groups, "*"},
                             {"ZREVRANGE", q.gidx, "0", std::to_string(limit), "WITHSCORES"}};
  const bool listed = idle_groups == IdleGroups::Listed;
  if (listed) first.push_back({"HLEN", q.groups});
  std::vector<Reply> r = x.pipeline(first);
  GroupsView v;
  v.grouped_pending = count_of(r[1]);
  v.groups = count_of(r[0]) - (r[1].is_nil() ? 0 : 1);
  v.rotation = count_of(r[2]);
  v.default_policy = text_of(r[3]).value_or("");
  if (listed) v.policies = std::max<std::int64_t>(0, count_of(r[5]) - (text_of(r[3]) ? 1 : 0));
  const std::vector<Reply>& window = r[4].elements;
  std::vector<std::pair<std::string, std::int64_t>> names;
  for (std::size_t i = 0; i + 1 < window.size() && names.size() < limit; i += 2) {
    const std::string& g = window[i].str;
    if (valid_group_name(g)) names.emplace_back(g, count_of(window[i + 1]));
  }
  // Room left, and the window held all of gidx: the groups with a policy
  // and no keys follow (all of gidx is known, so none of them holds keys).
  std::vector<std::string> idle;
  if (window.size() / 2 <= limit && names.size() < limit && v.policies > 0 && v.policies <= kPoliciesLooked) {
    std::set<std::string> keyed;
    for (std::size_t i = 0; i < window.size(); i += 2) keyed.insert(window[i].str);
    idle = idle_policies(x, q, keyed, limit - names.size());
  }
  std::vector<Command> reads;
  for (const auto& [g, pending] : names) add_group_reads(reads, q, g);
  for (const std::string& g : idle) add_group_reads(reads, q, g);
  std::vector<Reply> each = reads.empty() ? std::vector<Reply>{} : x.pipeline(reads);
  for (std::size_t i = 0; i < names.size(); ++i) {
    v.top.push_back(group_from(names[i].first, names[i].second, &each[i * 4], v.default_policy));
  }
  for (std::size_t i = 0; i < idle.size(); ++i) {
    v.top.push_back(group_from(idle[i], 0, &each[(names.size() + i) * 4], v.default_policy));
    v.top.back().holds_keys = false;
  }
  // Every group left out either holds keys or has a policy of its own.
  const auto own =
      std::count_if(v.top.begin(), v.top.end(), [](const GroupState& s) { return s.own_policy.has_value(); });
  v.more = v.groups > static_cast<std::int64_t>(names.size()) || v.policies > own;
  return v;
}

GroupState read_group(Executor& x, const QueueKeys& q, std::string_view group) {
  check_group_name(group);
  const std::string g(group);
  std::vector<Command> reads{{"ZSCORE", q.gidx, g}, {"HGET", q.groups, "*"}};
  add_group_reads(reads, q, g);
  std::vector<Reply> r = x.pipeline(reads);
  return group_from(g, count_of(r[0]), &r[2], text_of(r[1]).value_or(""));
}

std::vector<std::string> group_pending_ids(Executor& x, const QueueKeys& q, std::string_view group, std::int64_t offset,
                                           std::int64_t limit) {
  std::vector<std::string> ids;
  if (limit <= 0) return ids;
  Reply r = x.pipeline({{"ZRANGE", q.gq(group), std::to_string(offset), std::to_string(offset + limit - 1)}}).front();
  for (const Reply& e : r.elements) ids.push_back(e.str);
  return ids;
}

}  // namespace echomq
