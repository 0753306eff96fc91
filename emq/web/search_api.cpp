#include "web/search_api.h"

#include "echomq/bulk_actions.h"
#include "echomq/search.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// The most one request may read: a hundred pages of rows.
constexpr std::int64_t kMaxScan = 50000;

// The search a query names, or the answer saying what is wrong with it.
struct Parsed {
  SearchArgs args;
  std::string error;
};

Parsed parse(const SearchApi::Query& query) {
  Parsed p;
  const std::optional<JobState> state = job_state_from(query.state.empty() ? "pending" : query.state);
  if (!state) {
    p.error = "state '" + query.state.substr(0, 40) + "' is not one of pending, active, delayed, dead, waiting";
    return p;
  }
  p.args.state = *state;
  if (!query.scan.empty()) {
    const std::optional<std::int64_t> n = whole_number(query.scan);
    if (!n || *n <= 0 || *n > kMaxScan) {
      p.error = "scan '" + query.scan.substr(0, 40) + "' must be a whole number 1.." + std::to_string(kMaxScan);
      return p;
    }
    p.args.scan = *n;
  }
  if (query.q.empty()) {
    p.error = "q is empty: give the text to look for";
  } else if (query.in.empty() || query.in == "payload") {
    p.args.payload_contains = query.q;
  } else if (query.in == "error") {
    p.args.error_contains = query.q;
  } else if (query.in == "id") {
    p.args.id_prefix = query.q;
  } else if (query.in == "any") {
    p.args.any_contains = query.q;
  } else {
    p.error = "in '" + query.in.substr(0, 40) + "' must be payload, error, any or id";
  }
  // Everything found is counted; the rows of the first kShown are read.
  p.args.limit = p.args.scan;
  p.args.detail = SearchApi::kShown;
  p.args.preview_bytes = 200;
  return p;
}

ApiAnswer id_search(Executor& x, const std::string& id) {
  json found = json::array();
  for (const FoundJob& f : find_job_by_id(x, id, 200)) {
    json o = listed_job_json(f.job, JobState::Active);
    o["time_ms"] = nullptr;
    o["queue"] = f.queue;
    found.push_back(std::move(o));
  }
  json out = {{"kind", "id"}, {"q", json()}, {"found", std::move(found)}};
  put_text(out, "q", id);
  return {200, std::move(out)};
}

}  // namespace

ApiAnswer SearchApi::search(const Query& query) {
  if (query.queue.empty()) {
    if (query.q.empty()) return api_error(400, "q is empty: give a job id, or a queue and a text to look for");
    return id_search(x_, query.q);
  }
  QueueKeys q(query.queue);
  Parsed p = parse(query);
  if (!p.error.empty()) return api_error(400, p.error);
  const SearchResult r = search_jobs(x_, q, p.args);
  json jobs = json::array();
  for (std::size_t i = 0; i < r.jobs.size() && i < kShown; ++i)
    jobs.push_back(listed_job_json(r.jobs[i], p.args.state));
  json out = {{"kind", "text"},
              {"queue", q.queue},
              {"state", to_string(p.args.state)},
              {"in", query.in.empty() ? "payload" : query.in},
              {"q", json()},
              {"scanned", r.scanned},
              {"total", r.total},
              {"found", r.jobs.size()},
              {"jobs", std::move(jobs)}};
  put_text(out, "q", query.q);
  return {200, std::move(out)};
}

ApiAnswer SearchApi::bulk(const std::string& queue, const std::string& action, const Query& query) {
  QueueKeys q(queue);
  Query match = query;
  if (match.in.empty()) match.in = "any";
  if (action == "retry" && !match.state.empty() && match.state != "dead") {
    return api_error(400, "bulk retry acts on dead jobs: leave state out or give dead");
  }
  if (action == "retry") match.state = "dead";
  Parsed p = parse(match);
  if (!p.error.empty()) return api_error(400, p.error);
  if (action == "cancel" && p.args.state != JobState::Pending && p.args.state != JobState::Delayed) {
    return api_error(400, "bulk cancel acts on pending or delayed jobs: state=pending or state=delayed");
  }
  p.args.detail = 0;
  const SearchResult r = search_jobs(x_, q, p.args);
  std::vector<std::string> ids;
  for (const JobSummary& j : r.jobs) ids.push_back(j.id);
  const BulkResult b = action == "retry" ? retry_found(x_, q, ids) : cancel_found(x_, q, p.args.state, ids);
  return {200,
          {{"queue", q.queue},
           {"action", action},
           {"state", to_string(p.args.state)},
           {"scanned", r.scanned},
           {"total", r.total},
           {"found", ids.size()},
           {"done", b.done},
           {"changed", b.changed},
           {"held", b.held}}};
}

}  // namespace echomq::cli
