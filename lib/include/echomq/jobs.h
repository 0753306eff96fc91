// Listing the jobs of one state of a queue, a page at a time: what `emq
// jobs` prints and what `emq web` shows. Plain reads, by index, so a page
// of a million-job set costs what a page of a ten-job set costs: one ranged
// read of the set, then one pipeline of small row reads (never KEYS or
// SCAN, never a whole payload past kPreviewFetchMax).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

// The sets a job rests in between transitions; Waiting holds the parents
// of flows until their children have finished.
enum class JobState { Pending, Active, Delayed, Dead, Waiting };

const char* to_string(JobState s);
// "pending", "active", "delayed", "dead", "waiting"; nullopt for anything
// else.
std::optional<JobState> job_state_from(std::string_view name);
// The set of q that holds jobs in state s.
const std::string& set_key(const QueueKeys& q, JobState s);
// How many jobs of q are in state s now (ZCARD).
std::int64_t count_jobs(Executor& x, const QueueKeys& q, JobState s);

// By the set's score, then byte order of id (the set's own order).
// Ascending is claim order for pending, earliest lease deadline first for
// active, soonest due first for delayed, oldest death first for dead,
// longest waiting first for waiting.
enum class ListOrder { Ascending, Descending };
// What an operator looks at first: the newest deaths for dead, the set's
// own order for the rest (the next claim, the next deadline, the next due).
ListOrder default_order(JobState s);

// Payloads longer than this are not read for a preview: a page of large
// payloads must not cost their bytes.
inline constexpr std::int64_t kPreviewFetchMax = 64 * 1024;

struct JobSummary {
  std::string id;
  // The set's score: the lane (pending), the lease deadline (active), the
  // due time (delayed), the time of death (dead) or the time enqueued
  // (waiting); times in epoch ms.
  std::int64_t score = 0;
  // Row fields. A row can go between the two reads (completed, cancelled):
  // then row_found is false and the rest is zero or empty.
  bool row_found = false;
  std::string state;
  std::int64_t attempts = 0;
  std::int64_t failures = 0;
  std::int64_t lane = 0;
  std::optional<std::string> error;
  std::int64_t payload_bytes = 0;
  // The payload's first preview_bytes, never cut inside a UTF-8 character
  // when the payload is UTF-8; nullopt when the payload is over
  // kPreviewFetchMax and was not read.
  std::optional<std::string> payload_head;
  bool payload_utf8 = false;  // the whole payload, as read (false when unread)
};

struct ListArgs {
  JobState state = JobState::Pending;
  std::int64_t offset = 0;   // index in the chosen order, >= 0
  std::int64_t limit = 100;  // > 0
  ListOrder order = ListOrder::Ascending;
  std::size_t preview_bytes = 64;
};

struct JobPage {
  std::int64_t total = 0;  // jobs in the set when it was read
  std::vector<JobSummary> jobs;
};

// Fills the row fields of jobs whose id is set (attempts, failures, lane,
// error, payload preview): two pipelined round trips however many, the
// second only for payloads to preview. A row gone reads as row_found false.
void read_rows(Executor& x, const QueueKeys& q, std::vector<JobSummary>& jobs, std::size_t preview_bytes);

// Throws Error{Invalid} for a negative offset or a limit <= 0.
JobPage list_jobs(Executor& x, const QueueKeys& q, const ListArgs& args);

}  // namespace echomq
