#include "web/lists_api.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "echomq/errors.h"
#include "echomq/events.h"
#include "echomq/keyspace.h"
#include "echomq/search.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// Entries asked for per XREVRANGE: a page of completions in one round trip
// when the stream is mostly completions, more trips when it is not.
constexpr std::int64_t kChunk = 500;

// A stream entry id as the server writes it: "<ms>-<seq>", both digits.
bool entry_id_like(const std::string& text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string::npos || text.size() > 41) return false;
  return whole_number(text.substr(0, dash)) && whole_number(text.substr(dash + 1));
}

std::int64_t entry_ms(const std::string& entry) { return whole_number(entry.substr(0, entry.find('-'))).value_or(0); }

struct Scan {
  std::vector<EventEntry> completed;
  std::int64_t scanned = 0;
  std::string next;  // where the next page starts; "" at the stream's start
};

Scan scan_completed(Executor& x, const QueueKeys& q, const std::string& before) {
  Scan s;
  std::string from = before.empty() ? "+" : "(" + before;
  while (true) {
    const Reply r = x.command({"XREVRANGE", q.events, from, "-", "COUNT", std::to_string(kChunk)});
    if (r.is_error()) throw error_from_reply("events", r.str);
    const std::vector<EventEntry> entries = decode_entries(r);
    std::string last;
    for (const EventEntry& e : entries) {
      ++s.scanned;
      last = e.entry_id;
      if (e.event == "completed") s.completed.push_back(e);
      if (static_cast<std::int64_t>(s.completed.size()) == kCompletedPageSize) break;
    }
    const bool full = static_cast<std::int64_t>(s.completed.size()) == kCompletedPageSize;
    const bool at_start = static_cast<std::int64_t>(entries.size()) < kChunk;
    if (full || (!at_start && s.scanned >= kCompletedScanEntries)) {
      s.next = last;
      return s;
    }
    if (at_start) return s;
    from = "(" + last;
  }
}

}  // namespace

ApiAnswer completed_answer(Executor& x, const std::string& queue, const std::string& before) {
  const QueueKeys q(queue);
  if (!before.empty() && !entry_id_like(before)) {
    return api_error(400, "before '" + before.substr(0, 40) +
                              "' is not a stream entry id (<ms>-<seq>): use the \"next\" of the page before");
  }
  json out = {{"queue", q.queue}};
  if (decode_events(x.command(events_read(q))) == 0) {
    out["keeps_events"] = false;
    out["how"] =
        "this queue keeps no events, so no completions are listed: set queues[].events (or defaults.events) "
        "in emqd's config, e.g. events: 10000, and restart emqd";
    out["completed"] = json::array();
    out["next"] = nullptr;
    return {200, std::move(out)};
  }
  const Scan s = scan_completed(x, q, before);
  std::vector<Command> reads;
  for (const EventEntry& e : s.completed) reads.push_back({"HGET", q.row(e.job_id), "state"});
  const std::vector<Reply> states = reads.empty() ? std::vector<Reply>{} : x.pipeline(reads);
  json rows = json::array();
  for (std::size_t i = 0; i < s.completed.size(); ++i) {
    const EventEntry& e = s.completed[i];
    json o = {{"entry", e.entry_id}, {"time_ms", entry_ms(e.entry_id)}};
    put_text(o, "id", e.job_id);
    put_bytes(o, "attempt", e.attempt);
    if (states[i].is_error()) throw error_from_reply("row", states[i].str);
    // The row outlives its completion only keep_completed_s: the page links
    // the id while it does.
    o["row_state"] = states[i].is_nil() ? json(nullptr) : json(states[i].str);
    rows.push_back(std::move(o));
  }
  out["keeps_events"] = true;
  out["scanned"] = s.scanned;
  out["completed"] = std::move(rows);
  out["next"] = s.next.empty() ? json(nullptr) : json(s.next);
  return {200, std::move(out)};
}

RetriesPage retries_page(Executor& x, const QueueKeys& q, std::int64_t offset, std::int64_t limit,
                         std::size_t preview_bytes) {
  SearchArgs a;
  a.state = JobState::Delayed;
  a.failed_only = true;
  a.scan = kRetriesScanEntries;
  a.limit = kRetriesScanEntries;  // every retry scanned is counted
  a.detail = 0;                   // rows are read for the page's slice only
  SearchResult found = search_jobs(x, q, a);
  RetriesPage out;
  out.scanned = found.scanned;
  out.delayed = found.total;
  out.page.total = static_cast<std::int64_t>(found.jobs.size());
  const auto from = static_cast<std::size_t>(std::min(offset, out.page.total));
  const auto to = static_cast<std::size_t>(std::min(offset + limit, out.page.total));
  out.page.jobs.assign(std::make_move_iterator(found.jobs.begin() + static_cast<std::ptrdiff_t>(from)),
                       std::make_move_iterator(found.jobs.begin() + static_cast<std::ptrdiff_t>(to)));
  read_rows(x, q, out.page.jobs, preview_bytes);
  return out;
}

}  // namespace echomq::cli
