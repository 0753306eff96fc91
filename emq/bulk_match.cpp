#include "bulk_match.h"

#include <iostream>

#include "echomq/bulk_actions.h"
#include "echomq/errors.h"
#include "confirm.h"
#include "output.h"

namespace echomq::cli {

namespace {

// Every job of state whose payload or error holds the text, within --scan:
// no --limit, since the action is on all of them.
std::vector<std::string> found_ids(Executor& x, const QueueKeys& q, JobState state, const MatchOptions& o) {
  if (o.text.empty()) throw Error(ErrorKind::Invalid, "match", "--match needs a text to look for");
  if (o.scan <= 0) throw Error(ErrorKind::Invalid, "match", "--scan " + std::to_string(o.scan) + " must be > 0");
  SearchArgs args;
  args.state = state;
  args.any_contains = o.text;
  args.scan = o.scan;
  args.limit = o.scan;
  args.preview_bytes = 0;
  const SearchResult r = search_jobs(x, q, args);
  std::string line = "found " + std::to_string(r.jobs.size()) + " " + to_string(state) + " jobs of queue " + q.queue +
                     " whose payload or error contains the text (scanned " + std::to_string(r.scanned) + " of " +
                     std::to_string(r.total) + ")";
  if (r.scanned < r.total) line += "; the rest were not read: --scan N reads more";
  say(line);
  std::vector<std::string> ids;
  for (const JobSummary& j : r.jobs) ids.push_back(j.id);
  return ids;
}

int report(const char* verb, const BulkResult& r) {
  std::cout << r.done << '\n';
  std::string line = std::string(verb) + " " + std::to_string(r.done);
  if (r.changed > 0) line += "; " + std::to_string(r.changed) + " had changed state and were left alone";
  say(line);
  return kExitOk;
}

}  // namespace

int run_retry_match(Tool& tool, const MatchOptions& o) {
  QueueKeys q(o.queue);
  Executor x(tool.options());
  const std::vector<std::string> ids = found_ids(x, q, JobState::Dead, o);
  if (ids.empty()) return report("retried", {});
  if (!confirmed("retry these " + std::to_string(ids.size()) + " dead jobs?", o.yes)) return kExitNotFound;
  return report("retried", retry_found(x, q, ids));
}

int run_cancel_match(Tool& tool, const MatchOptions& o, JobState state) {
  QueueKeys q(o.queue);
  if (state != JobState::Pending && state != JobState::Delayed) {
    throw Error(ErrorKind::Invalid, "cancel",
                "--match cancels pending or delayed jobs (--state pending|delayed); dead ones: emq dead delete");
  }
  Executor x(tool.options());
  const std::vector<std::string> ids = found_ids(x, q, state, o);
  if (ids.empty()) return report("cancelled", {});
  if (!confirmed("cancel these " + std::to_string(ids.size()) + " " + to_string(state) + " jobs?", o.yes)) {
    return kExitNotFound;
  }
  return report("cancelled", cancel_found(x, q, state, ids));
}

}  // namespace echomq::cli
