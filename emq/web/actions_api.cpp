#include "web/actions_api.h"

#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "bytes_text.h"
#include "limit_change.h"
#include "schedule_fire.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// A refused action's answer with a word a script can branch on.
ApiAnswer refused(int status, const std::string& outcome, const std::string& message) {
  ApiAnswer a = api_error(status, message);
  a.body["outcome"] = outcome;
  return a;
}

// A name from a path, as a message shows it: cut, and never raw bytes.
std::string named(const std::string& text) { return "'" + text_cell(text, 80) + "'"; }

json limit_json(const QueueLimits& l) {
  json o = json::object();
  o["max_active"] = l.max_active ? json(*l.max_active) : json(nullptr);
  o["rate"] = l.rate ? json{{"max", l.rate->max}, {"window_ms", l.rate->window_ms}} : json(nullptr);
  o["described"] = describe(l);
  return o;
}

}  // namespace

ApiAnswer ActionsApi::promote(const std::string& queue, const std::string& id) {
  QueueKeys q(queue);
  check_wire_gate(id);
  if (promote_jobs(x_, q, {id}).front() != PromoteJobResult::Moved) {
    return refused(409, "not_delayed",
                   named(id) +
                       " is not delayed any more (it ran, was promoted, cancelled or never delayed); "
                       "nothing changed");
  }
  json out = {{"queue", q.queue}, {"promoted", true}};
  put_text(out, "id", id);
  return {200, std::move(out)};
}

ApiAnswer ActionsApi::fire(const std::string& queue, const std::string& name) {
  QueueKeys q(queue);
  const FireOutcome r = fire_schedule(x_, q, name, "");
  switch (r.kind) {
    case FireOutcome::Kind::Fired: {
      json out = {{"queue", q.queue}, {"fired", true}, {"job", r.job_id}};
      put_text(out, "schedule", name);
      return {200, std::move(out)};
    }
    case FireOutcome::Kind::NoSchedule:
      return refused(404, "no_schedule", "no schedule " + named(name) + " is published in queue " + q.queue);
    case FireOutcome::Kind::Broken:
      return refused(409, "broken",
                     "not fired: the published definition of " + named(name) + " " + r.problem +
                         "; a daemon that runs the schedule publishes it again when it starts");
    case FireOutcome::Kind::Skipped:
      return refused(409, "skipped", "not fired: overlap is skip and the last fire's job is unfinished");
    case FireOutcome::Kind::MarkerAhead:
      return refused(409, "marker_ahead", "not fired: the marker already holds a fire at or after now");
    case FireOutcome::Kind::KeyHeld:
      return refused(409, "key_held",
                     "not fired: the schedule's unique key is held by " + r.job_id + " (" + r.problem + ")");
  }
  return api_error(500, "unexpected fire outcome");
}

ApiAnswer ActionsApi::limits(const std::string& queue, const std::string& max_active, const std::string& rate) {
  QueueKeys q(queue);
  if (max_active.empty() && rate.empty()) {
    return api_error(400, "nothing to change: give max_active (N or off) and/or rate (N/PERIOD or off)");
  }
  // Both values are checked before either is written.
  LimitChange change;
  if (!max_active.empty()) change.max_active.emplace(max_active_of(max_active, "max_active"));
  if (!rate.empty()) change.rate.emplace(rate_of(rate, "rate"));
  const LimitsWritten w = change_limits(x_, q, change);
  json out = {{"queue", q.queue}, {"limits", limit_json(w.now)}};
  out["was_broken"] = w.was_broken.empty() ? json(nullptr) : json(w.was_broken);
  return {200, std::move(out)};
}

ApiAnswer ActionsApi::purge_dead(const std::string& queue) {
  QueueKeys q(queue);
  // The wire's cancel, a batch per round trip (job_actions.h, purge): as
  // `emq purge --state dead`, so no one call holds the server long.
  const PurgeResult r = purge(x_, q, JobState::Dead);
  return {200, {{"queue", q.queue}, {"deleted", r.removed}, {"refused_active", r.refused_active}}};
}

}  // namespace echomq::cli
