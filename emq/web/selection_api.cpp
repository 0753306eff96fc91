#include "web/selection_api.h"

#include <algorithm>

#include "echomq/bulk_actions.h"
#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"

namespace echomq::cli {

namespace {

// Which list each action acts from: the states its transition takes a job out of.
struct Action {
  const char* name;
  std::vector<JobState> states;
};
const Action kActions[] = {{"retry", {JobState::Dead}},
                           {"run", {JobState::Delayed}},
                           {"cancel", {JobState::Pending, JobState::Delayed}},
                           {"delete", {JobState::Dead}}};

const Action* action_of(const std::string& name) {
  for (const Action& a : kActions) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string states_text(const Action& a) {
  std::string out;
  for (JobState s : a.states) out += std::string(out.empty() ? "" : " or ") + to_string(s);
  return out;
}

// What the transitions did: done, or moved on (not in that state any more).
BulkResult run_action(Executor& x, const QueueKeys& q, const Action& a, JobState state,
                      const std::vector<std::string>& ids) {
  const std::string name = a.name;
  if (name == "retry") return retry_found(x, q, ids);
  if (name == "cancel") return cancel_found(x, q, state, ids);
  BulkResult out;
  if (name == "run") {
    for (PromoteJobResult r : promote_jobs(x, q, ids)) ++(r == PromoteJobResult::Moved ? out.done : out.changed);
  } else {
    for (bool deleted : delete_dead_jobs(x, q, ids)) ++(deleted ? out.done : out.changed);
  }
  return out;
}

}  // namespace

ApiAnswer act_on_selection(Executor& x, const std::string& queue, const std::string& action_name,
                           const std::string& state_text, const std::vector<std::string>& ids) {
  const QueueKeys q(queue);
  const Action* a = action_of(action_name);
  if (a == nullptr) return api_error(404, "no such action on a selection: use retry, run, cancel or delete");
  const std::optional<JobState> state = job_state_from(state_text);
  if (!state || std::find(a->states.begin(), a->states.end(), *state) == a->states.end()) {
    return api_error(400, std::string(a->name) + " acts on " + states_text(*a) + " jobs: give state=" +
                              to_string(a->states.front()) + " (the list the jobs were selected on)");
  }
  if (ids.empty()) return api_error(400, "no id given: name each selected job as id=JOB_...");
  if (ids.size() > kBulkBatch) {
    return api_error(400, std::to_string(ids.size()) + " ids in one request; at most " + std::to_string(kBulkBatch) +
                              ": send a larger selection in batches");
  }
  for (const std::string& id : ids) check_wire_gate(id);
  const BulkResult r = run_action(x, q, *a, *state, ids);
  return {200,
          {{"queue", q.queue},
           {"action", a->name},
           {"state", to_string(*state)},
           {"asked", ids.size()},
           {"done", r.done},
           {"moved_on", r.changed},
           {"held", r.held}}};
}

}  // namespace echomq::cli
