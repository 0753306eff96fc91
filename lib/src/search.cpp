#include "echomq/search.h"

#include <algorithm>
#include <iterator>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "lenient_reply.h"

namespace echomq {

namespace {
constexpr const char* kOp = "search";

void throw_if_error(const Reply& r) {
  if (r.is_error()) throw error_from_reply(kOp, r.str);
}

bool contains(const std::optional<std::string>& field, const std::string& text) {
  return field && field->find(text) != std::string::npos;
}

// One page of the set from rank `from`, in the state's default order.
Command page_read(const std::string& set, JobState state, std::int64_t from, std::int64_t count) {
  Command c{"ZRANGE", set, std::to_string(from), std::to_string(from + count - 1)};
  if (default_order(state) == ListOrder::Descending) c.push_back("REV");
  c.push_back("WITHSCORES");
  return c;
}

std::vector<JobSummary> ids_of(Reply& range) {
  throw_if_error(range);
  std::vector<JobSummary> ids;
  for (std::size_t k = 0; k + 1 < range.elements.size(); k += 2) {
    JobSummary job;
    job.id = std::move(range.elements[k].str);
    job.score = number_of(range.elements[k + 1]);
    ids.push_back(std::move(job));
  }
  return ids;
}

bool reads_rows(const SearchArgs& a) {
  return !a.payload_contains.empty() || !a.error_contains.empty() || !a.any_contains.empty() || a.failed_only;
}

// The row fields a match is decided on: the payload only when it is asked
// about, so an error search does not pay for payload bytes.
Command row_read(const QueueKeys& q, const SearchArgs& a, const std::string& id) {
  Command c{"HMGET", q.row_root + id, "error", "failures"};
  if (!a.payload_contains.empty() || !a.any_contains.empty()) c.push_back("payload");
  return c;
}

// Where a matching row holds the texts asked for.
struct Hits {
  bool payload = false;
  bool error = false;
};

// nullopt when the row does not match.
std::optional<Hits> row_matches(Reply& fields, const SearchArgs& a) {
  // A row gone since the set was read (settled, cancelled) matches nothing.
  if (fields.is_error() || fields.elements.empty()) return std::nullopt;
  std::optional<std::string> error = string_of(fields.elements[0]);
  if (a.failed_only && number_of(fields.elements[1]) <= 0) return std::nullopt;
  std::optional<std::string> payload =
      fields.elements.size() > 2 ? string_of(fields.elements[2]) : std::optional<std::string>();
  if (!a.error_contains.empty() && !contains(error, a.error_contains)) return std::nullopt;
  if (!a.payload_contains.empty() && !contains(payload, a.payload_contains)) return std::nullopt;
  Hits hits{!a.payload_contains.empty(), !a.error_contains.empty()};
  if (!a.any_contains.empty()) {
    const bool in_payload = contains(payload, a.any_contains);
    const bool in_error = contains(error, a.any_contains);
    if (!in_payload && !in_error) return std::nullopt;
    hits.payload = hits.payload || in_payload;
    hits.error = hits.error || in_error;
  }
  return hits;
}

bool has_prefix(const std::string& id, const std::string& prefix) { return id.compare(0, prefix.size(), prefix) == 0; }
}  // namespace

SearchResult search_jobs(Executor& x, const QueueKeys& q, const SearchArgs& a) {
  if (a.scan <= 0) throw Error(ErrorKind::Invalid, kOp, "scan " + std::to_string(a.scan) + " must be > 0");
  if (a.limit <= 0) throw Error(ErrorKind::Invalid, kOp, "limit " + std::to_string(a.limit) + " must be > 0");
  const std::string& set = set_key(q, a.state);
  SearchResult out;

  std::vector<Reply> first = x.pipeline({{"ZCARD", set}, page_read(set, a.state, 0, std::min(a.scan, kSearchPage))});
  throw_if_error(first[0]);
  out.total = number_of(first[0]);
  std::vector<JobSummary> page = ids_of(first[1]);
  std::int64_t last_asked = std::min(a.scan, kSearchPage);
  std::int64_t asked = last_asked;  // ids asked for so far

  // Each round trip reads the rows of this page and the ids of the next.
  while (!page.empty()) {
    std::vector<std::size_t> candidates;
    std::vector<Command> reads;
    for (std::size_t i = 0; i < page.size(); ++i) {
      if (!has_prefix(page[i].id, a.id_prefix)) continue;
      candidates.push_back(i);
      if (reads_rows(a)) reads.push_back(row_read(q, a, page[i].id));
    }
    // A short page is the set's end.
    const bool more = static_cast<std::int64_t>(page.size()) == last_asked && asked < a.scan;
    const std::int64_t next = std::min(kSearchPage, a.scan - asked);
    if (more) reads.push_back(page_read(set, a.state, asked, next));
    std::vector<Reply> replies = reads.empty() ? std::vector<Reply>{} : x.pipeline(reads);

    std::size_t scanned_here = page.size();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (reads_rows(a)) {
        const std::optional<Hits> hits = row_matches(replies[c], a);
        if (!hits) continue;
        out.in_payload += hits->payload;
        out.in_error += hits->error;
      }
      out.jobs.push_back(std::move(page[candidates[c]]));
      if (static_cast<std::int64_t>(out.jobs.size()) == a.limit) {
        out.limit_reached = true;
        scanned_here = candidates[c] + 1;
        break;
      }
    }
    out.scanned += static_cast<std::int64_t>(scanned_here);
    if (out.limit_reached || !more) break;
    page = ids_of(replies.back());
    last_asked = next;
    asked += next;
  }
  if (out.jobs.size() <= a.detail) {
    read_rows(x, q, out.jobs, a.preview_bytes);
    return out;
  }
  std::vector<JobSummary> rest(std::make_move_iterator(out.jobs.begin() + static_cast<std::ptrdiff_t>(a.detail)),
                               std::make_move_iterator(out.jobs.end()));
  out.jobs.resize(a.detail);
  read_rows(x, q, out.jobs, a.preview_bytes);
  for (JobSummary& j : rest) out.jobs.push_back(std::move(j));
  return out;
}

std::vector<FoundJob> find_job_by_id(Executor& x, std::string_view id, std::size_t preview_bytes) {
  check_wire_gate(id);
  std::vector<QueueKeys> queues;
  for (const std::string& name : known_queues(x)) {
    // A name a peer registered that no queue may have holds no job.
    try {
      queues.emplace_back(name);
    } catch (const Error&) {
    }
  }
  std::vector<Command> exists;
  for (const QueueKeys& q : queues) exists.push_back({"EXISTS", q.row(id)});
  std::vector<FoundJob> found;
  if (exists.empty()) return found;
  std::vector<Reply> r = x.pipeline(exists);
  for (std::size_t i = 0; i < queues.size(); ++i) {
    throw_if_error(r[i]);
    if (r[i].integer == 0) continue;
    std::vector<JobSummary> one(1);
    one[0].id = std::string(id);
    read_rows(x, queues[i], one, preview_bytes);
    if (one[0].row_found) found.push_back({queues[i].queue, std::move(one[0])});
  }
  return found;
}

}  // namespace echomq
