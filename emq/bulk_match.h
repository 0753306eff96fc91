// The bulk forms of emq dead retry and emq cancel (--match TEXT): search,
// print the count, ask, then act in batches (bulk_actions.h).
#pragma once

#include <cstdint>
#include <string>

#include "echomq/jobs.h"
#include "echomq/search.h"
#include "tool.h"

namespace echomq::cli {

struct MatchOptions {
  std::string queue;
  std::string text;
  // Where the text is looked for: "any" (the payload or the error, the
  // default, as emq web's bulk actions), "payload", "error", or "id" (a
  // prefix of the id).
  std::string in = "any";
  std::int64_t scan = kDefaultSearchScan;
  bool yes = false;
};

// --in on a command with --match: where to look for the text.
void add_match_in_option(CLI::App* cmd, MatchOptions& o);

// Retries the dead jobs found; prints the count retried on stdout.
int run_retry_match(Tool& tool, const MatchOptions& o);
// Cancels the pending or delayed jobs found; prints the count cancelled.
int run_cancel_match(Tool& tool, const MatchOptions& o, JobState state);

}  // namespace echomq::cli
