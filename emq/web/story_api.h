// A job's story on its page (docs/web.md, "A job's story"): every run of
// it read back from its queue's events stream (PROTOCOL.md, "Events"):
// each `active` entry starts one, the job's next entry ends it (completed,
// failed and retried, died, released, removed), with the times of both;
// the enqueue, first start and end, and the time it ran in all. The
// stream is read newest first, back to the job's enqueue (its minted id
// dates it) and at most kStoryScanEntries entries; what the stream no
// longer holds (trimmed, or past the bound) is said, not guessed: the
// row's `failures` counts every failed run, retries or not, so fewer failed
// runs in the stream means some were trimmed.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq::cli {

inline constexpr std::int64_t kStoryScanEntries = 5000;

// What of a job's row the story is checked against.
struct StoryRow {
  std::string state;
  std::int64_t failures = 0;  // failed runs, kept across retries
};

// Puts "keeps_events", "events" (the job's entries, oldest first) and
// "story" into a job's answer.
void put_story(Executor& x, const QueueKeys& q, const std::string& id, const StoryRow& row,
               nlohmann::ordered_json& out);

}  // namespace echomq::cli
