// Finding jobs an operator cannot name by position: one job by its exact
// id across every known queue, or the jobs of one queue and state whose
// payload or error holds a text, or whose id starts with a prefix. What
// `emq search`, the bulk forms (`--match`) and `emq web`'s search box use.
//
// Bounded by design: a search reads at most `scan` ids of the state's set,
// by rank, in pipelined pages (ZRANGE of the set plus HMGET of the rows,
// kSearchPage per round trip), never KEYS or SCAN of the keyspace, and
// always says how many rows it read of how many the set holds. Texts are
// bytes, matched case-sensitively: a payload is whatever its producer
// wrote, and no case folding is right for every encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/jobs.h"
#include "echomq/keyspace.h"

namespace echomq {

inline constexpr std::int64_t kDefaultSearchScan = 10000;
inline constexpr std::int64_t kDefaultSearchLimit = 50;
// Ids per pipelined page: large enough to amortise the round trip, small
// enough that no one reply holds the server (or this process) for long.
inline constexpr std::int64_t kSearchPage = 500;

struct SearchArgs {
  JobState state = JobState::Pending;
  // Every text given must match (AND); none given matches every row read.
  std::string id_prefix;
  std::string payload_contains;
  std::string error_contains;
  // The payload or the error holds it: the bulk forms' --match.
  std::string any_contains;
  // Only rows with failures > 0: among delayed jobs, the retries waiting
  // for their next attempt (the page's Retries tab), not scheduled ones.
  bool failed_only = false;
  std::int64_t scan = kDefaultSearchScan;    // ids read at most, > 0
  std::int64_t limit = kDefaultSearchLimit;  // matches kept at most, > 0
  std::size_t preview_bytes = 64;            // of each match's payload
  // Matches whose rows are read for a summary (jobs.h, read_rows); the
  // rest carry id and score only: a count for a bulk action costs no
  // row reads past the ones shown.
  std::size_t detail = SIZE_MAX;
};

struct SearchResult {
  std::int64_t scanned = 0;  // ids of the set read
  std::int64_t total = 0;    // ids the set held at the first read
  // The search stopped at `limit` matches; rows past `scanned` were not read.
  bool limit_reached = false;
  std::vector<JobSummary> jobs;  // the matches, in the set's default order
  // Of the matches, how many hold a text asked for in the payload, and in
  // the error (one may hold it in both): where any_contains found it.
  std::int64_t in_payload = 0;
  std::int64_t in_error = 0;
};

// Throws Error{Invalid} for scan or limit <= 0. The set is read in its
// default order (jobs.h): jobs that move while the scan runs may be read
// twice or missed, as a paged listing would.
SearchResult search_jobs(Executor& x, const QueueKeys& q, const SearchArgs& args);

struct FoundJob {
  std::string queue;
  JobSummary job;  // score 0: a row has no one score; state from the row
};

// The job `id` in every queue of {emq}:queues (and none other): one
// pipelined read of one row per queue. Usually one answer; several when
// producers reused an id across queues. Throws Error{Kind} for an id past
// the wire's gate.
std::vector<FoundJob> find_job_by_id(Executor& x, std::string_view id, std::size_t preview_bytes = 64);

}  // namespace echomq
