#include "echomq/jobs.h"

#include "echomq/bytes.h"
#include "echomq/errors.h"
#include "lenient_reply.h"

namespace echomq {

namespace {
constexpr const char* kOp = "jobs";

void throw_if_error(const Reply& r) {
  if (r.is_error()) throw error_from_reply(kOp, r.str);
}

void set_preview(JobSummary& job, const std::string& payload, std::size_t preview_bytes) {
  job.payload_utf8 = is_utf8(payload);
  job.payload_head = std::string(job.payload_utf8 ? utf8_prefix(payload, preview_bytes)
                                                  : std::string_view(payload).substr(0, preview_bytes));
}
}  // namespace

const char* to_string(JobState s) {
  switch (s) {
    case JobState::Pending: return "pending";
    case JobState::Active: return "active";
    case JobState::Delayed: return "delayed";
    case JobState::Dead: return "dead";
    case JobState::Waiting: return "waiting";
  }
  return "";
}

std::optional<JobState> job_state_from(std::string_view name) {
  for (JobState s : {JobState::Pending, JobState::Active, JobState::Delayed, JobState::Dead, JobState::Waiting}) {
    if (name == to_string(s)) return s;
  }
  return std::nullopt;
}

const std::string& set_key(const QueueKeys& q, JobState s) {
  switch (s) {
    case JobState::Active: return q.active;
    case JobState::Delayed: return q.delayed;
    case JobState::Dead: return q.dead;
    case JobState::Waiting: return q.waiting;
    case JobState::Pending: break;
  }
  return q.pending;
}

std::int64_t count_jobs(Executor& x, const QueueKeys& q, JobState s) {
  Reply card = x.command({"ZCARD", set_key(q, s)});
  if (card.is_error()) throw error_from_reply("count", card.str);
  return card.integer;
}

ListOrder default_order(JobState s) { return s == JobState::Dead ? ListOrder::Descending : ListOrder::Ascending; }

void read_rows(Executor& x, const QueueKeys& q, std::vector<JobSummary>& jobs, std::size_t preview_bytes) {
  if (jobs.empty()) return;
  std::vector<Command> rows;
  for (const JobSummary& job : jobs) {
    // Ids come from the server: whatever their shape, the row is the root
    // plus the id, as the scripts derive it.
    const std::string row = q.row_root + job.id;
    rows.push_back({"HMGET", row, "state", "attempts", "failures", "lane", "error"});
    rows.push_back({"HSTRLEN", row, "payload"});
  }
  std::vector<Reply> fields = x.pipeline(rows);
  std::vector<Command> payloads;
  std::vector<std::size_t> wanted;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    JobSummary& job = jobs[i];
    Reply& f = fields[2 * i];
    // A row that is not a hash answers WRONGTYPE: shown as gone, not fatal.
    if (f.is_error() || f.elements.size() != 5) continue;
    std::optional<std::string> state = string_of(f.elements[0]);
    if (!state) continue;
    job.row_found = true;
    job.state = std::move(*state);
    job.attempts = number_of(f.elements[1]);
    job.failures = number_of(f.elements[2]);
    job.lane = number_of(f.elements[3]);
    job.error = string_of(f.elements[4]);
    job.payload_bytes = number_of(fields[2 * i + 1]);
    if (preview_bytes > 0 && job.payload_bytes <= kPreviewFetchMax) {
      payloads.push_back({"HGET", rows[2 * i][1], "payload"});
      wanted.push_back(i);
    }
  }
  if (payloads.empty()) return;

  std::vector<Reply> bodies = x.pipeline(payloads);
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    if (bodies[k].type == Reply::Type::String) set_preview(jobs[wanted[k]], bodies[k].str, preview_bytes);
  }
}

JobPage list_jobs(Executor& x, const QueueKeys& q, const ListArgs& a) {
  if (a.offset < 0) throw Error(ErrorKind::Invalid, kOp, "offset " + std::to_string(a.offset) + " must be >= 0");
  if (a.limit <= 0) throw Error(ErrorKind::Invalid, kOp, "limit " + std::to_string(a.limit) + " must be > 0");
  const std::string& set = set_key(q, a.state);

  // ZRANGE by index: O(log n + limit) however large the set.
  Command range{"ZRANGE", set, std::to_string(a.offset), std::to_string(a.offset + a.limit - 1)};
  if (a.order == ListOrder::Descending) range.push_back("REV");
  range.push_back("WITHSCORES");
  std::vector<Reply> first = x.pipeline({{"ZCARD", set}, range});
  for (const Reply& r : first) throw_if_error(r);

  JobPage page;
  page.total = number_of(first[0]);
  std::vector<Reply>& members = first[1].elements;
  for (std::size_t k = 0; k + 1 < members.size(); k += 2) {
    JobSummary job;
    job.id = std::move(members[k].str);
    job.score = number_of(members[k + 1]);
    page.jobs.push_back(std::move(job));
  }
  read_rows(x, q, page.jobs, a.preview_bytes);
  return page;
}

}  // namespace echomq
