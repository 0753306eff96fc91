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
  std::string text;  // in the payload or the error
  std::int64_t scan = kDefaultSearchScan;
  bool yes = false;
};

// Retries the dead jobs found; prints the count retried on stdout.
int run_retry_match(Tool& tool, const MatchOptions& o);
// Cancels the pending or delayed jobs found; prints the count cancelled.
int run_cancel_match(Tool& tool, const MatchOptions& o, JobState state);

}  // namespace echomq::cli
