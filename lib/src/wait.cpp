#include "echomq/wait.h"

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "echomq/events.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstPoll{5};
constexpr milliseconds kMaxPoll{500};
// Entries one XREAD takes at most; more wait for the next.
constexpr const char* kReadCount = "1000";

ConnectionOptions blocking(ConnectionOptions o) {
  // A blocked XREAD answers when the stream moves or its block ends, and
  // never later than kRecheck: the read must not time out before it.
  if (o.command_timeout.count() > 0)
    o.command_timeout = std::max(o.command_timeout, Waiter::kRecheck + milliseconds(10000));
  return o;
}

// An entry id in the stream's order; 0-0 for anything else.
StreamEntryId entry_order(const std::string& id) { return stream_entry_id(id).value_or(StreamEntryId{}); }

// A deadline the clock cannot hold (a timeout of centuries) is none: the
// wait lasts as long as it takes, rather than ending at once on a
// deadline that overflowed into the past.
std::optional<Clock::time_point> deadline_after(std::optional<milliseconds> timeout) {
  if (!timeout) return std::nullopt;
  const Clock::time_point now = Clock::now();
  const milliseconds room = std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - now);
  if (*timeout >= room) return std::nullopt;
  return now + std::max(*timeout, milliseconds(0));
}

std::optional<milliseconds> left(std::optional<Clock::time_point> until) {
  if (!until) return std::nullopt;
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(*until - Clock::now()));
}
}  // namespace

Command job_end_read(const QueueKeys& q, const std::string& id) {
  return {"HMGET", q.row(id), "state", "result", "error", "attempts"};
}

JobEnd job_end_of(const Reply& r) {
  if (r.is_error()) throw error_from_reply("wait", r.str);
  JobEnd e;
  const auto field = [&](std::size_t i) {
    return i < r.elements.size() && r.elements[i].type == Reply::Type::String ? r.elements[i].str : std::string();
  };
  const bool row = r.elements.size() == 4 && r.elements[0].type == Reply::Type::String;
  e.state = field(0);
  e.result = field(1);
  e.error = field(2);
  e.attempts = field(3);
  if (!row) {
    e.how = JobEnd::How::Gone;
  } else if (e.state == "completed") {
    e.how = JobEnd::How::Completed;
  } else if (e.state == "dead") {
    e.how = JobEnd::How::Dead;
  }
  return e;
}

struct Waiter::Pending {
  std::vector<std::string> ids;
  std::vector<JobEnd> ends;
  std::multimap<std::string, std::size_t> open;  // id -> its places in ids, while not ended

  std::vector<std::size_t> all_open() const {
    std::vector<std::size_t> out;
    for (const auto& [id, i] : open) out.push_back(i);
    return out;
  }
  void note(std::size_t i, JobEnd e) {
    const bool ended = e.how != JobEnd::How::NotEnded;
    ends[i] = std::move(e);
    if (!ended) return;
    for (auto [at, end] = open.equal_range(ids[i]); at != end; ++at) {
      if (at->second == i) {
        open.erase(at);
        return;
      }
    }
  }
};

Waiter::Waiter(ConnectionOptions options) : x_(blocking(std::move(options))) {}

std::vector<JobEnd> Waiter::wait(const QueueKeys& q, const std::vector<std::string>& ids,
                                 std::optional<milliseconds> timeout) {
  Pending p;
  p.ids = ids;
  p.ends.resize(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    q.row(ids[i]);  // the wire's gate, before anything is sent
    p.open.emplace(ids[i], i);
  }
  by_events(q, p, deadline_after(timeout));
  return std::move(p.ends);
}

// The rows of `which`, read again: true when any of them ended.
bool Waiter::read_ends(const QueueKeys& q, Pending& p, const std::vector<std::size_t>& which) {
  if (which.empty()) return false;
  std::vector<Command> reads;
  reads.reserve(which.size());
  for (std::size_t i : which) reads.push_back(job_end_read(q, p.ids[i]));
  commands_ += reads.size();
  std::vector<Reply> rows = x_.pipeline(reads);
  const std::size_t before = p.open.size();
  for (std::size_t k = 0; k < which.size(); ++k) p.note(which[k], job_end_of(rows[k]));
  return p.open.size() < before;
}

void Waiter::by_events(const QueueKeys& q, Pending& p, std::optional<Clock::time_point> until) {
  // The rows and the stream's last entry id at one instant: whatever ends
  // a job after it is an entry after that id, however the stream is
  // trimmed meanwhile.
  std::vector<Command> reads{events_read(q)};
  for (const std::string& id : p.ids) reads.push_back(job_end_read(q, id));
  reads.push_back({"XREVRANGE", q.events, "+", "-", "COUNT", "1"});
  commands_ += reads.size() + 2;
  std::vector<Reply> at = x_.transaction(reads);
  for (std::size_t i = 0; i < p.ids.size(); ++i) p.note(i, job_end_of(at[1 + i]));
  used_events_ = decode_events(at[0]) > 0;
  if (!used_events_) return by_polling(q, p, until);
  const std::vector<EventEntry> last = decode_entries(at.back());
  std::string last_id = last.empty() ? "0-0" : last.front().entry_id;

  while (!p.open.empty()) {
    const std::optional<milliseconds> rest = left(until);
    if (rest && rest->count() == 0) return;
    const milliseconds block = rest ? std::min(*rest, kRecheck) : kRecheck;
    // Right behind the read, the oldest entry kept: past our position,
    // the stream was trimmed and an entry of ours may be lost.
    commands_ += 2;
    std::vector<Reply> r =
        x_.pipeline({{"XREAD", "COUNT", kReadCount, "BLOCK", std::to_string(std::max<std::int64_t>(1, block.count())),
                      "STREAMS", q.events, last_id},
                     {"XRANGE", q.events, "-", "+", "COUNT", "1"}});
    if (r[0].is_error()) throw error_from_reply("wait", r[0].str);
    if (r[0].is_nil()) {
      // A block ran out with no entry: the rows once more (the recheck).
      read_ends(q, p, p.all_open());
      continue;
    }
    const std::vector<EventEntry> first = decode_entries(r[1]);
    const bool trimmed_past = !first.empty() && entry_order(first.front().entry_id) > entry_order(last_id);
    std::vector<EventEntry> entries;
    for (const Reply& stream : r[0].elements) {
      if (stream.elements.size() == 2) entries = decode_entries(stream.elements[1]);
    }
    if (!entries.empty()) last_id = entries.back().entry_id;
    std::vector<std::size_t> named;
    if (trimmed_past) {
      named = p.all_open();
    } else {
      for (const EventEntry& e : entries) {
        if (!is_final_event(e.event)) continue;
        for (auto [it, end] = p.open.equal_range(e.job_id); it != end; ++it) named.push_back(it->second);
      }
      std::sort(named.begin(), named.end());
      named.erase(std::unique(named.begin(), named.end()), named.end());
    }
    read_ends(q, p, named);
  }
}

void Waiter::by_polling(const QueueKeys& q, Pending& p, std::optional<Clock::time_point> until) {
  milliseconds step = kFirstPoll;
  while (!p.open.empty()) {
    const std::optional<milliseconds> rest = left(until);
    if (rest && rest->count() == 0) return;
    std::this_thread::sleep_for(rest ? std::min(step, *rest) : step);
    step = std::min(step * 2, kMaxPoll);
    read_ends(q, p, p.all_open());
  }
}

}  // namespace echomq
