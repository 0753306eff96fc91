#include "web/story_api.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "echomq/errors.h"
#include "echomq/events.h"
#include "echomq/job_id.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

constexpr std::int64_t kChunk = 1000;
// Read this far before the minted time too: the producer's clock may be
// ahead of the server's, whose clock numbers the entries.
constexpr std::int64_t kClockSlackMs = 60000;

std::int64_t entry_ms(const std::string& entry) { return whole_number(entry.substr(0, entry.find('-'))).value_or(0); }

// An entry that puts the job where a new job starts, attempt 0: its enqueue
// (retry_job's too, which only a minted time tells apart).
bool enqueue_like(const EventEntry& e) {
  return e.attempt == "0" && (e.event == "pending" || e.event == "delayed" || e.event == "waiting");
}

struct Scan {
  std::vector<EventEntry> mine;  // the job's entries, newest first
  std::int64_t scanned = 0;
  bool bound_hit = false;  // kStoryScanEntries read before reaching the end
};

Scan scan_back(Executor& x, const QueueKeys& q, const std::string& id, const std::string& stop) {
  Scan s;
  std::string from = "+";
  while (true) {
    const std::int64_t ask = std::min(kChunk, kStoryScanEntries - s.scanned);
    const Reply r = x.command({"XREVRANGE", q.events, from, stop, "COUNT", std::to_string(ask)});
    if (r.is_error()) throw error_from_reply("events", r.str);
    const std::vector<EventEntry> entries = decode_entries(r);
    for (const EventEntry& e : entries) {
      if (e.job_id == id) s.mine.push_back(e);
    }
    s.scanned += static_cast<std::int64_t>(entries.size());
    if (static_cast<std::int64_t>(entries.size()) < ask) return s;
    if (s.scanned >= kStoryScanEntries) {
      s.bound_hit = true;
      return s;
    }
    from = "(" + entries.back().entry_id;
  }
}

// What ending a run by this entry says.
const char* outcome_of(const EventEntry& e) {
  if (e.event == "completed") return "completed";
  if (e.event == "dead") return "died";
  if (e.event == "removed") return "removed";
  if (e.event == "active") return "lost";  // claimed again with no end seen
  return e.error.empty() ? "released" : "failed";
}

json run_json(const EventEntry* start, const EventEntry* end, const std::string& state) {
  json o = json::object();
  o["attempt"] = start ? start->attempt : end->attempt;
  o["started_ms"] = start ? json(entry_ms(start->entry_id)) : json(nullptr);
  o["ended_ms"] = end && end->event != "active" ? json(entry_ms(end->entry_id)) : json(nullptr);
  o["run_ms"] =
      start && !o["ended_ms"].is_null() ? json(entry_ms(end->entry_id) - entry_ms(start->entry_id)) : json(nullptr);
  o["outcome"] = end ? outcome_of(*end) : (state == "active" ? "running" : "unknown");
  o["error"] = end && !end->error.empty() && end->event != "active" ? shown_bytes(end->error, 256) : json(nullptr);
  return o;
}

// The runs, oldest first, from the job's entries, oldest first. An end
// before any start is the end of a run whose start the stream no longer
// holds; a later entry that is no end (a parent killed while it waited)
// belongs to no run.
json runs_of(const std::vector<EventEntry>& entries, const std::string& state) {
  json runs = json::array();
  const EventEntry* start = nullptr;
  bool first = true;
  for (const EventEntry& e : entries) {
    if (e.event == "progress") continue;
    if (start != nullptr) {
      runs.push_back(run_json(start, &e, state));
      start = nullptr;
    } else if (first && (e.event == "completed" || (!e.error.empty() && e.event != "removed"))) {
      runs.push_back(run_json(nullptr, &e, state));
    }
    if (e.event == "active") start = &e;
    first = false;
  }
  if (start != nullptr) runs.push_back(run_json(start, nullptr, state));
  return runs;
}

std::int64_t failed_runs(const json& runs) {
  std::int64_t n = 0;
  for (const json& run : runs) n += run["outcome"] == "failed" || run["outcome"] == "died" ? 1 : 0;
  return n;
}

// Why runs may be missing, or null when the stream holds the whole story.
// No clock is compared: the row's failures and the runs themselves say it.
json cut_of(const Scan& s, const json& runs, std::int64_t failures) {
  if (s.bound_hit) {
    return "only the stream's latest " + std::to_string(kStoryScanEntries) +
           " entries were read: earlier runs of this job are not shown";
  }
  if (const std::int64_t missing = failures - failed_runs(runs); missing > 0) {
    return "the events stream was trimmed: it no longer holds " + std::to_string(missing) + " of the " +
           std::to_string(failures) + " failed runs the row counts";
  }
  if (!runs.empty() && runs.front()["started_ms"].is_null()) {
    return "the events stream was trimmed: it no longer holds the start of the first run shown";
  }
  return nullptr;
}

}  // namespace

void put_story(Executor& x, const QueueKeys& q, const std::string& id, const StoryRow& row, json& out) {
  out["keeps_events"] = decode_events(x.command(events_read(q))) > 0;
  const std::optional<std::uint64_t> minted = minted_at_ms(id);
  const std::int64_t stop_ms =
      minted ? std::max<std::int64_t>(0, static_cast<std::int64_t>(*minted) - kClockSlackMs) : 0;
  Scan s = scan_back(x, q, id, minted ? std::to_string(stop_ms) : "-");
  std::vector<EventEntry> mine(s.mine.rbegin(), s.mine.rend());

  json events = json::array();
  for (const EventEntry& e : mine) {
    json o = {{"entry", e.entry_id}, {"event", e.event}, {"attempt", e.attempt}};
    if (!e.error.empty()) o["error"] = shown_bytes(e.error, 256);
    if (!e.progress.empty()) o["progress"] = shown_bytes(e.progress, 1024);
    events.push_back(std::move(o));
  }
  out["events"] = std::move(events);

  json runs = runs_of(mine, row.state);
  std::int64_t run_ms = 0;
  for (const json& run : runs) run_ms += run["run_ms"].is_null() ? 0 : run["run_ms"].get<std::int64_t>();
  json story = json::object();
  story["scanned"] = s.scanned;
  story["cut"] = cut_of(s, runs, row.failures);
  if (minted) {
    story["enqueued_ms"] = static_cast<std::int64_t>(*minted);
  } else {
    story["enqueued_ms"] =
        !mine.empty() && enqueue_like(mine.front()) ? json(entry_ms(mine.front().entry_id)) : json(nullptr);
  }
  story["started_ms"] = runs.empty() ? json(nullptr) : runs.front()["started_ms"];
  const bool over = row.state == "completed" || row.state == "dead";
  story["finished_ms"] = over && !runs.empty() ? runs.back()["ended_ms"] : json(nullptr);
  story["run_ms"] = runs.empty() ? json(nullptr) : json(run_ms);
  story["runs"] = std::move(runs);
  out["story"] = std::move(story);
}

}  // namespace echomq::cli
