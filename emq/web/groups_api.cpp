#include "web/groups_api.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "echomq/errors.h"
#include "echomq/groups.h"
#include "echomq/jobs.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/whole_number.h"
#include "group_change.h"
#include "limit_change.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// A listed job's payload head, as a queue's page lists its jobs.
constexpr std::size_t kPreviewBytes = 200;
// Past this a page number cannot name a real page (offsets are int64).
constexpr std::int64_t kMaxGroupPage = 1'000'000'000'000;

json policy_json(const std::optional<GroupPolicy>& p) {
  if (!p) return nullptr;
  json o = {{"weight", p->weight}};
  o["max_active"] = p->max_active ? json(*p->max_active) : json(nullptr);
  o["rate"] = p->rate ? json{{"max", p->rate->max}, {"window_ms", p->rate->window_ms}} : json(nullptr);
  o["paused"] = p->paused;
  o["described"] = describe(*p);
  return o;
}

// A group as the page shows it; names are of the group alphabet, so text.
json group_json(const GroupState& s) {
  json o = {{"group", s.name}, {"pending", s.pending}, {"active", s.active}};
  o["own_policy"] = s.own_policy ? json(*s.own_policy) : json(nullptr);
  o["policy"] = policy_json(s.policy);
  o["broken"] = s.policy ? json(nullptr) : json(s.broken);
  o["place"] = std::string(place_name(s.place));
  o["turn"] = s.turn ? json(*s.turn) : json(nullptr);
  return o;
}

json default_json(const std::string& text) {
  std::string why;
  const std::optional<GroupPolicy> p = parse_group_policy(text, &why);
  return {
      {"text", text}, {"described", p ? json(describe(*p)) : json(nullptr)}, {"broken", p ? json(nullptr) : json(why)}};
}

ApiAnswer refused(int status, const std::string& outcome, const std::string& message) {
  ApiAnswer a = api_error(status, message);
  a.body["outcome"] = outcome;
  return a;
}

// The change a form asks for; throws Error{Invalid} naming the field for a
// bad value, before anything is read or written.
GroupChange change_of(const GroupForm& f) {
  GroupChange c;
  if (f.action == "pause" || f.action == "resume") {
    c.paused = f.action == "pause";
    return c;
  }
  if (!f.weight.empty()) c.weight = weight_of(f.weight, "weight");
  if (!f.max_active.empty()) c.max_active.emplace(max_active_of(f.max_active, "max_active"));
  if (!f.rate.empty()) c.rate.emplace(rate_of(f.rate, "rate"));
  return c;
}

}  // namespace

ApiAnswer groups_answer(Executor& x, const std::string& queue, const std::string& limit_text) {
  QueueKeys q(queue);
  const std::optional<std::int64_t> limit =
      limit_text.empty() ? std::optional<std::int64_t>(kGroupsShown) : whole_number_in(limit_text, 1, kMaxGroupsShown);
  if (!limit) return api_error(400, "limit '" + limit_text.substr(0, 40) + "' is not 1..100");
  const GroupsView v = read_groups(x, q, static_cast<std::size_t>(*limit));
  json top = json::array();
  for (const GroupState& s : v.top) top.push_back(group_json(s));
  return {200,
          {{"queue", q.queue},
           {"groups", v.groups},
           {"grouped_pending", v.grouped_pending},
           {"rotation", v.rotation},
           {"default_policy", default_json(v.default_policy)},
           {"policies", v.policies},
           {"limit", *limit},
           {"more", v.more},
           {"top", std::move(top)}}};
}

ApiAnswer group_answer(Executor& x, const std::string& queue, const std::string& group, const std::string& page_text) {
  QueueKeys q(queue);
  const std::optional<std::int64_t> page =
      page_text.empty() ? std::optional<std::int64_t>(1) : whole_number_in(page_text, 1, kMaxGroupPage);
  if (!page) return api_error(400, "page '" + page_text.substr(0, 40) + "' is not a page number: use 1, 2, ...");
  const GroupState s = read_group(x, q, group);
  const std::int64_t size = WebApi::kPageSize;
  std::vector<JobSummary> listed;
  for (std::string& id : group_pending_ids(x, q, group, (*page - 1) * size, size)) {
    JobSummary j;
    j.id = std::move(id);
    listed.push_back(std::move(j));
  }
  read_rows(x, q, listed, kPreviewBytes);
  json jobs = json::array();
  for (JobSummary& j : listed) {
    j.score = j.lane;  // the group's zset scores its ids by lane, as pending does
    jobs.push_back(listed_job_json(j, JobState::Pending));
  }
  return {200,
          {{"queue", q.queue},
           {"group", group_json(s)},
           {"page", *page},
           {"page_size", size},
           {"total", s.pending},
           {"pages", std::max<std::int64_t>(1, (s.pending + size - 1) / size)},
           {"jobs", std::move(jobs)}}};
}

ApiAnswer group_action(Executor& x, const std::string& queue, const std::string& group, const GroupForm& form) {
  QueueKeys q(queue);
  check_group_name(group);
  if (form.action == "policy" && form.weight.empty() && form.max_active.empty() && form.rate.empty()) {
    return api_error(400,
                     "nothing to change: give weight (1..1000), max_active (N or off) and/or rate (N/PERIOD or off)");
  }
  const GroupChange change = change_of(form);
  const GroupState before = read_group(x, q, group);
  if (!before.policy) {
    const std::string whose = before.own_policy ? "its own policy '" + *before.own_policy + "'" : "the default policy";
    return refused(409, "broken",
                   "group " + group + " runs by " + whose + ", which does not read (" + before.broken +
                       "): nothing changed; write it whole (emq group set)");
  }
  const GroupWritten w = change_group(x, q, group, change);
  return {200,
          {{"queue", q.queue},
           {"written", w.text},
           {"in_rotation", w.in_rotation},
           {"group", group_json(read_group(x, q, group))}}};
}

}  // namespace echomq::cli
