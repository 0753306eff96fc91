#include "web/api.h"

#include <map>

#include "text/duration.h"
#include "echomq/daemons.h"
#include "echomq/errors.h"
#include "echomq/events.h"
#include "echomq/flow_tools.h"
#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "echomq/keyspace.h"
#include "echomq/limits.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"
#include "daemon_view.h"
#include "pause_view.h"
#include "schedule_view.h"
#include "trace_url.h"
#include "web/lists_api.h"
#include "web/story_api.h"
#include "web/tree_api.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// How much of a job's payload, result or error the JSON carries: the page
// shows this much and links to the whole.
constexpr std::size_t kJobFieldBytes = 64 * 1024;
// How much of each listed job's payload and error a listing carries.
constexpr std::size_t kListPayloadBytes = 200;
constexpr std::size_t kListErrorBytes = 1000;
// Past this a page number cannot name a real page (offsets are int64).
constexpr std::int64_t kMaxPage = 1'000'000'000'000;

constexpr const char* kCounters[] = {"claimed", "completed", "retried", "dead", "reaped", "released"};

// The queue's limits and what they do now (limits.h, limit_status); null
// for a queue without any.
json limits_json(const QueueStats& s, std::int64_t now_ms) {
  const LimitStatus l = limit_status(s.limit_fields, s.active, now_ms);
  if (l.limits && *l.limits == QueueLimits{}) return nullptr;
  json o = json::object();
  o["broken"] = l.limits ? json(nullptr) : json(l.broken);
  o["max_active"] = l.limits && l.limits->max_active ? json(*l.limits->max_active) : json(nullptr);
  o["rate"] = l.limits && l.limits->rate ? json{{"max", l.limits->rate->max}, {"window_ms", l.limits->rate->window_ms}}
                                         : json(nullptr);
  o["tokens"] = l.tokens ? json(*l.tokens) : json(nullptr);
  o["ms_to_token"] = l.tokens && *l.tokens == 0 ? json(l.ms_to_token) : json(nullptr);
  o["held_back"] = l.held_back.empty() ? json(nullptr) : json(l.held_back);
  return o;
}

// The fleet, as far as the queues' pages need it (which queues a live
// daemon serves). The queues never depend on it: when the registry cannot
// be read, `fleet` is nullopt and served_by is unknown (null).
struct FleetForQueues {
  std::optional<Fleet> fleet;
  std::vector<std::string> problems;
};
FleetForQueues fleet_for_queues(Executor& x) {
  FleetForQueues out;
  try {
    Fleet f = list_daemons(x, false);
    out.problems = f.problems;
    if (f.readable) out.fleet = std::move(f);
  } catch (const Error& e) {
    out.problems.push_back(std::string("the fleet registry cannot be read: ") + e.what());
  }
  return out;
}

json queue_json(const QueueStats& s, std::int64_t now_ms, const std::optional<Fleet>& fleet) {
  json counters = json::object();
  for (const char* name : kCounters) {
    auto it = s.counters.find(name);
    counters[name] = it == s.counters.end() ? json(nullptr) : json(it->second);
  }
  json q = {{"queue", s.queue},     {"paused", s.paused}, {"pending", s.pending}, {"active", s.active},
            {"delayed", s.delayed}, {"dead", s.dead},     {"waiting", s.waiting}, {"counters", counters}};
  q["oldest_pending_age_ms"] =
      s.head_pending_since_ms ? json(std::max<std::int64_t>(0, now_ms - *s.head_pending_since_ms)) : json(nullptr);
  q["problems"] = s.problems;
  q["limits"] = limits_json(s, now_ms);
  q["pause"] = pause_json(s, now_ms);
  q["pause_text"] = describe_pause(s, now_ms);
  // 0: no live daemon claims from it; its jobs wait for one that does.
  // null: the registry could not be read, so nobody knows.
  q["served_by"] = fleet ? json(served_by(*fleet, s.queue)) : json(nullptr);
  return q;
}

// A listed job's payload head: hex when the whole payload is not UTF-8,
// even where its head happens to be.
json preview_json(const JobSummary& j) {
  if (!j.payload_head) return {{"bytes", j.payload_bytes}, {"unread", true}};
  const auto total = static_cast<std::size_t>(j.payload_bytes);
  if (j.payload_utf8) return shown_bytes(*j.payload_head, kListPayloadBytes, total);
  const std::string_view head = std::string_view(*j.payload_head).substr(0, kListPayloadBytes);
  return {{"bytes", total}, {"hex", hex_encode(head)}, {"truncated", head.size() < total}};
}

// An id as the page shows and links it: {"id": text}, plus "id_hex" (its
// exact bytes) when it is not UTF-8, where "id" has U+FFFD for the bad
// bytes and cannot name the job; the page builds its links from the hex.
void put_id(json& o, const std::string& id) { put_text(o, "id", id); }

json summary_json(const JobSummary& j, JobState state) {
  json o = json::object();
  put_id(o, j.id);
  o["row_found"] = j.row_found;
  o["state"] = j.row_found ? json(j.state) : json(nullptr);
  // The set's score: the lane for pending, a time in epoch ms otherwise.
  if (state == JobState::Pending) {
    o["lane"] = j.score;
    o["time_ms"] = nullptr;
  } else {
    o["lane"] = j.lane;
    o["time_ms"] = j.score;
  }
  o["attempts"] = j.attempts;
  o["failures"] = j.failures;
  o["error"] = j.error ? shown_bytes(*j.error, kListErrorBytes) : json(nullptr);
  o["payload"] = preview_json(j);
  return o;
}

// A queue's schedules as `emq schedules --json` gives them (its last
// fire's job linkable by last_job_hex, as put_id), each with its
// definition in words.
json schedules_json(Executor& x, const QueueKeys& q, std::int64_t now_ms) {
  json out = json::array();
  for (const ScheduleView& v : read_schedules(x, q, now_ms)) {
    json o = schedule_json(v);
    o["described"] = describe_definition(v);
    out.push_back(std::move(o));
  }
  return out;
}

// A ref's job as the page links it: queue, id (put_id) and the state of
// its row, null when the row is gone.
json ref_json(const std::string& queue, const std::string& id, const std::optional<std::string>& state) {
  json o = {{"queue", queue}};
  put_id(o, id);
  o["state"] = state ? json(*state) : json(nullptr);
  return o;
}

// A job's place in a flow (PROTOCOL.md, "Flows"): "parent", its parent
// when it is a child; "children", when it is a parent that still has them
// listed (deps and results: one that has run keeps none), each with its
// state, whether the parent still awaits it, what it was told of it, and,
// for an orphan (flows.h, find_orphans), why nothing will release it.
void put_flow(Executor& x, const QueueKeys& q, const JobRow& row, json& out) {
  out["parent"] = nullptr;
  out["children"] = nullptr;
  out["orphans"] = 0;
  auto parent = row.fields.find("parent");
  if (parent != row.fields.end()) {
    if (auto ref = parse_ref(parent->second)) {
      Reply state = x.command({"HGET", QueueKeys(ref->queue).row(ref->id), "state"});
      if (state.is_error()) throw error_from_reply("parent", state.str);
      out["parent"] =
          ref_json(ref->queue, ref->id, state.is_nil() ? std::nullopt : std::optional<std::string>(state.str));
    }
  }
  if (row.fields.count("children") == 0) return;
  const FlowView v = read_flow(x, q, row.id, 1);
  std::map<std::string, std::string> orphaned;  // child ref -> why
  if (v.state == "waiting") {
    for (FlowOrphan& o : find_orphans(x, q, {row.id})) orphaned[o.child] = std::move(o.reason);
  }
  json children = json::array();
  for (std::size_t i = 0; i < v.children.size(); ++i) {
    const FlowView& c = v.children[i];
    json o = ref_json(c.queue, c.id, c.found ? std::optional<std::string>(c.state) : std::nullopt);
    o["awaited"] = static_cast<bool>(v.awaited[i]);
    o["told"] = v.recorded[i] ? json(to_string(v.recorded[i]->outcome)) : json(nullptr);
    auto why = orphaned.find(c.queue + ":" + c.id);
    o["orphan"] = why == orphaned.end() ? json(nullptr) : json(why->second);
    children.push_back(std::move(o));
  }
  out["children"] = std::move(children);
  out["orphans"] = orphaned.size();
}

// The job's trace (trace_url.h): null when its row has no traceparent,
// else {"id", "url", "problem"}: id null when the field is not W3C (then
// problem says why), url null without --trace-url.
void put_trace(const JobRow& row, const std::string& tmpl, json& out) {
  const std::optional<JobTrace> t = job_trace(row, tmpl);
  if (!t) {
    out["trace"] = nullptr;
    return;
  }
  out["trace"] = {{"id", t->trace_id.empty() ? json(nullptr) : json(t->trace_id)},
                  {"url", t->url.empty() ? json(nullptr) : json(t->url)},
                  {"problem", t->problem.empty() ? json(nullptr) : json(t->problem)}};
}

// "" -> fallback; digits -> the number; anything else -> nullopt.
std::optional<std::int64_t> page_number(const std::string& text) {
  if (text.empty()) return 1;
  const std::optional<std::int64_t> n = whole_number(text);
  return n && *n >= 1 && *n <= kMaxPage ? n : std::nullopt;
}

// "" -> the default; one of the sizes the page offers; else nullopt.
std::optional<std::int64_t> page_size(const std::string& text) {
  if (text.empty()) return WebApi::kPageSize;
  const std::optional<std::int64_t> n = whole_number(text);
  return n && (*n == 50 || *n == 100 || *n == 500) ? n : std::nullopt;
}

}  // namespace

ApiAnswer api_error(int status, const std::string& message) {
  ApiAnswer a{status, {{"error", message}}};
  if (status == 503) a.body["server_unreachable"] = true;
  return a;
}

ApiAnswer guarded_api(const std::function<ApiAnswer()>& f) {
  try {
    return f();
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::Invalid:
      case ErrorKind::Kind:
      case ErrorKind::Arg: return api_error(400, e.what());
      default: break;
    }
    if (e.transient()) return api_error(503, std::string("the server cannot be reached: ") + e.what());
    return api_error(502, std::string("the server refused: ") + e.what());
  }
}

ApiAnswer WebApi::queues() {
  Overview o = overview(x_);
  const FleetForQueues fleet = fleet_for_queues(x_);
  // Read after the stats, so no oldest-pending age comes out negative.
  const std::int64_t now = x_.server_time_ms();
  json list = json::array();
  for (const QueueStats& s : o.queues) list.push_back(queue_json(s, now, fleet.fleet));
  return {200,
          {{"server_time_ms", now},
           {"read_only", read_only_},
           {"queues", std::move(list)},
           {"skipped", o.skipped},
           {"registry_problems", fleet.problems}}};
}

ApiAnswer WebApi::queue(const std::string& name, const std::string& state_text, const std::string& page_text,
                        const std::string& size_text) {
  QueueKeys q(name);
  // "retries": the delayed jobs that failed before (lists_api.h).
  const bool retries = state_text == "retries";
  const std::optional<JobState> state =
      retries ? JobState::Delayed : job_state_from(state_text.empty() ? "pending" : state_text);
  if (!state) {
    return api_error(
        400, "state '" + state_text + "' is not a state: use pending, active, delayed, retries, dead or waiting");
  }
  const std::optional<std::int64_t> page = page_number(page_text);
  if (!page) return api_error(400, "page '" + page_text + "' is not a page number: use 1, 2, ...");
  const std::optional<std::int64_t> size = page_size(size_text);
  if (!size) return api_error(400, "size '" + size_text.substr(0, 40) + "' is not a page size: use 50, 100 or 500");

  ListArgs args;
  args.state = *state;
  args.offset = (*page - 1) * *size;
  args.limit = *size;
  args.order = default_order(*state);
  args.preview_bytes = kListPayloadBytes;
  json out = {{"server_time_ms", nullptr}, {"read_only", read_only_}, {"queue", nullptr}};
  JobPage listed;
  if (retries) {
    RetriesPage r = retries_page(x_, q, args.offset, args.limit, args.preview_bytes);
    listed = std::move(r.page);
    out["scanned"] = r.scanned;
    out["delayed"] = r.delayed;
  } else {
    listed = list_jobs(x_, q, args);
  }
  const QueueStats s = stats(x_, q);
  const FleetForQueues fleet = fleet_for_queues(x_);
  const std::int64_t now = x_.server_time_ms();

  json jobs = json::array();
  for (const JobSummary& j : listed.jobs) jobs.push_back(summary_json(j, *state));
  out["server_time_ms"] = now;
  out["queue"] = queue_json(s, now, fleet.fleet);
  out["state"] = retries ? "retries" : to_string(*state);
  out["order"] = args.order == ListOrder::Ascending ? "ascending" : "descending";
  out["page"] = *page;
  out["page_size"] = *size;
  out["total"] = listed.total;
  out["pages"] = std::max<std::int64_t>(1, (listed.total + *size - 1) / *size);
  out["jobs"] = std::move(jobs);
  out["schedules"] = schedules_json(x_, q, now);
  return {200, std::move(out)};
}

ApiAnswer WebApi::job(const std::string& name, const std::string& id) {
  QueueKeys q(name);
  check_wire_gate(id);
  std::optional<JobRow> row = inspect(x_, q, id);
  if (!row) {
    return api_error(404, "no job " + id + " in queue " + q.queue +
                              " (it may have completed: a completed job's row is kept only keep_completed_s)");
  }
  json fields = json::object();
  json big = {{"payload", nullptr}, {"result", nullptr}, {"error", nullptr}};
  for (const auto& [field, value] : row->fields) {
    if (big.contains(field)) {
      big[field] = shown_bytes(value, kJobFieldBytes);
    } else {
      fields[field] = shown_bytes(value, kJobFieldBytes);
    }
  }
  auto state = row->fields.find("state");
  json out = {{"read_only", read_only_}, {"queue", q.queue}};
  put_id(out, id);
  out["state"] = state == row->fields.end() ? json(nullptr) : json(state->second);
  out["fields"] = std::move(fields);
  for (auto& [field, value] : big.items()) out[field] = value;
  put_flow(x_, q, *row, out);
  put_trace(*row, trace_url_, out);
  out["tree"] = row->fields.count("children") ? flow_tree_json(x_, q, id) : json(nullptr);
  StoryRow story{state == row->fields.end() ? "" : state->second, 0};
  if (auto failures = row->fields.find("failures"); failures != row->fields.end()) {
    story.failures = whole_number(failures->second).value_or(0);
  }
  put_story(x_, q, id, story, out);
  return {200, std::move(out)};
}

RawField WebApi::job_field(const std::string& name, const std::string& id, const std::string& field) {
  QueueKeys q(name);
  check_wire_gate(id);
  std::optional<JobRow> row = inspect(x_, q, id);
  if (!row) return {404, true, "no job " + id + " in queue " + q.queue + "\n"};
  auto it = row->fields.find(field);
  if (it == row->fields.end()) return {404, true, "job " + id + " has no " + field + "\n"};
  return {200, is_utf8(it->second), std::move(it->second)};
}

ApiAnswer WebApi::pause(const std::string& name, bool paused, const PauseQuery& how) {
  QueueKeys q(name);
  if (!paused) {
    resume(x_, q);
    return {200, {{"queue", q.queue}, {"paused", false}}};
  }
  PauseRequest request{how.by.empty() ? "emq web" : how.by, how.reason, std::nullopt};
  if (!how.for_text.empty()) {
    request.for_ms = daemon::parse_duration_ms(how.for_text);
    if (!request.for_ms || *request.for_ms < 1) {
      return api_error(400, "for '" + how.for_text.substr(0, 40) + "' is not a duration: e.g. 90s, 30m, 2h, 1d");
    }
  }
  echomq::pause(x_, q, request);
  const QueueStats s = stats(x_, q);
  return {200, {{"queue", q.queue}, {"paused", true}, {"pause", describe_pause(s, x_.server_time_ms())}}};
}

ApiAnswer WebApi::daemons() {
  const Fleet f = list_daemons(x_, true);
  json list = json::array();
  for (const DaemonInfo& d : f.daemons) list.push_back(daemon_json(d, f.server_time_ms, true));
  return {200,
          {{"server_time_ms", f.server_time_ms},
           {"read_only", read_only_},
           {"daemons", std::move(list)},
           {"ghosts", f.ghosts},
           {"problems", f.problems}}};
}

ApiAnswer WebApi::signal_daemon(const std::string& id, const std::string& signal) {
  if (!valid_daemon_id(id))
    return api_error(400, "'" + id.substr(0, 100) + "' is not a daemon id (<host>-<pid>-<6 hex>)");
  const DaemonRead found = read_daemons(x_, {id}, false).front();
  if (!found.problem.empty()) return api_error(502, found.problem + "; nothing was sent");
  const std::int64_t sent = x_.server_time_ms();
  if (!found.daemon || !send_signal(x_, *found.daemon, signal)) {
    return api_error(404, "no live daemon " + id.substr(0, 100) + " (it stopped beating, or left); nothing was sent");
  }
  const std::optional<std::int64_t> every = found.daemon->beat_every_ms(sent);
  return {200,
          {{"id", id}, {"signal", signal}, {"sent_ms", sent}, {"beat_every_ms", every ? json(*every) : json(nullptr)}}};
}

ApiAnswer WebApi::retry_all(const std::string& name) {
  QueueKeys q(name);
  const RetryDeadResult r = retry_all_dead(x_, q);
  return {200, {{"queue", q.queue}, {"moved", r.moved}, {"skipped", r.skipped}}};
}

ApiAnswer WebApi::retry(const std::string& name, const std::string& id) {
  QueueKeys q(name);
  check_wire_gate(id);
  std::vector<KeyHolder> holders;
  const RetryJobResult r = retry_jobs(x_, q, {id}, &holders).front();
  if (r == RetryJobResult::NotDead) {
    return api_error(409, id + " is not dead (it was retried, deleted or never died); nothing changed");
  }
  if (r == RetryJobResult::KeyHeld) {
    return api_error(409, id + " stays dead: its unique key is held by " + holders.front().id + " (" +
                              holders.front().state + "); retry it once that job has finished");
  }
  return {200, {{"queue", q.queue}, {"id", id}, {"retried", true}}};
}

ApiAnswer WebApi::cancel(const std::string& name, const std::string& id) {
  QueueKeys q(name);
  check_wire_gate(id);
  switch (cancel_jobs(x_, q, {id}).front()) {
    case CancelResult::Removed: return {200, {{"queue", q.queue}, {"id", id}, {"cancelled", true}}};
    case CancelResult::NotFound:
      return api_error(404, "no job " + id + " in queue " + q.queue + "; nothing was cancelled");
    case CancelResult::Refused: return api_error(409, cancel_refusal(x_, q, id));
  }
  return api_error(500, "unexpected cancel outcome");
}

json listed_job_json(const JobSummary& j, JobState state) { return summary_json(j, state); }

}  // namespace echomq::cli
