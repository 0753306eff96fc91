#include "bulk_match.h"

#include <iostream>

#include "echomq/bulk_actions.h"
#include "echomq/errors.h"
#include "confirm.h"
#include "output.h"

namespace echomq::cli {

namespace {

// The search --match TEXT --in WHERE asks for, and its words.
struct MatchSearch {
  SearchArgs args;
  const char* words;
};

MatchSearch match_search(const MatchOptions& o, JobState state) {
  MatchSearch m{{}, nullptr};
  m.args.state = state;
  if (o.in == "any") {
    m.args.any_contains = o.text;
    m.words = "whose payload or error contains the text";
  } else if (o.in == "payload") {
    m.args.payload_contains = o.text;
    m.words = "whose payload contains the text";
  } else if (o.in == "error") {
    m.args.error_contains = o.text;
    m.words = "whose error contains the text";
  } else if (o.in == "id") {
    m.args.id_prefix = o.text;
    m.words = "whose id starts with the text";
  } else {
    throw Error(ErrorKind::Invalid, "match", "--in '" + o.in.substr(0, 40) + "' must be payload, error, id or any");
  }
  return m;
}

// Every job of state that matches, within --scan: no --limit, since the
// action is on all of them. The count is said per field before any
// question, so a text that is also in errors is seen before it acts.
std::vector<std::string> found_ids(Executor& x, const QueueKeys& q, JobState state, const MatchOptions& o) {
  if (o.text.empty()) throw Error(ErrorKind::Invalid, "match", "--match needs a text to look for");
  if (o.scan <= 0) throw Error(ErrorKind::Invalid, "match", "--scan " + std::to_string(o.scan) + " must be > 0");
  MatchSearch m = match_search(o, state);
  m.args.scan = o.scan;
  m.args.limit = o.scan;
  m.args.preview_bytes = 0;
  const SearchResult r = search_jobs(x, q, m.args);
  std::string line =
      "found " + std::to_string(r.jobs.size()) + " " + to_string(state) + " jobs of queue " + q.queue + " " + m.words;
  if (o.in == "any") {
    line += ": " + std::to_string(r.in_payload) + " in the payload, " + std::to_string(r.in_error) +
            " in the error (--in payload|error|id narrows it)";
  }
  line += " (scanned " + std::to_string(r.scanned) + " of " + std::to_string(r.total) + ")";
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
  if (r.held > 0) {
    line += "; " + std::to_string(r.held) +
            " stayed dead: another live job holds their unique key (emq inspect names it), retry them once it has "
            "finished";
  }
  say(line);
  return kExitOk;
}

}  // namespace

void add_match_in_option(CLI::App* cmd, MatchOptions& o) {
  cmd->add_option("--in", o.in,
                  "with --match: where to look: any (the payload or the error, default), payload, error, or id "
                  "(a prefix)")
      ->type_name("WHERE");
}

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
