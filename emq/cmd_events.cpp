// emq events QUEUE... [--follow] [--from ID] [--json]: the queues' event
// streams (PROTOCOL.md, "Events"), oldest first; --follow blocks on XREAD
// for new entries until interrupted.
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr const char* kPage = "1000";
// How long one XREAD of --follow blocks; the connection's timeout is set past it.
constexpr std::chrono::milliseconds kBlock{30000};

struct EventsArgs {
  std::vector<std::string> queues;
  bool follow = false;
  std::string from;  // "": the oldest kept; "$": only what comes next
  bool json = false;
};

std::int64_t entry_ms(const std::string& entry_id) {
  const std::optional<StreamEntryId> id = stream_entry_id(entry_id);
  return id ? static_cast<std::int64_t>(id->ms) : 0;
}

// One entry, as a line of text or of JSON. Lines of several threads never mix.
void print(const std::string& queue, const EventEntry& e, bool json) {
  static std::mutex out;
  std::string line;
  if (json) {
    nlohmann::ordered_json o = {{"queue", queue}, {"entry", e.entry_id}, {"time", iso_time(entry_ms(e.entry_id))}};
    put_bytes(o, "event", e.event);
    put_bytes(o, "id", e.job_id);
    put_bytes(o, "attempt", e.attempt);
    if (!e.error.empty()) put_bytes(o, "error", e.error);
    if (!e.progress.empty()) put_bytes(o, "progress", e.progress);
    line = o.dump();
  } else {
    line = e.entry_id + "  " + iso_time(entry_ms(e.entry_id)) + "  " + queue + "  " + text_cell(e.event, 16) + "  " +
           text_cell(e.job_id, 140) + "  attempt " + text_cell(e.attempt, 20);
    if (!e.error.empty()) line += "  error: " + text_cell(e.error, 256);
    if (!e.progress.empty()) line += "  progress: " + text_cell(e.progress, 256);
  }
  std::lock_guard<std::mutex> lock(out);
  std::cout << line << '\n' << std::flush;
}

// Where a queue's reading starts: after `from`, or at the stream's end for "$".
std::string start_of(Executor& x, const QueueKeys& q, const std::string& from) {
  if (from.empty()) return "0-0";
  if (from != "$") return from;
  const std::vector<EventEntry> last = decode_entries(x.command({"XREVRANGE", q.events, "+", "-", "COUNT", "1"}));
  return last.empty() ? "0-0" : last.front().entry_id;
}

// XREAD from each position, blocking for `block` (none: not at all), each
// entry printed; the positions move past them. False when no entry came.
bool read_once(Executor& x, const std::vector<QueueKeys>& queues, std::vector<std::string>& at, bool json,
               std::optional<std::chrono::milliseconds> block) {
  Command c{"XREAD", "COUNT", kPage};
  if (block) c.insert(c.end(), {"BLOCK", std::to_string(block->count())});
  c.push_back("STREAMS");
  for (const QueueKeys& q : queues) c.push_back(q.events);
  c.insert(c.end(), at.begin(), at.end());
  Reply r = x.command(c);
  if (r.is_error()) throw error_from_reply("events", r.str);
  if (r.is_nil()) return false;
  for (const Reply& stream : r.elements) {
    if (stream.elements.size() != 2) continue;
    for (std::size_t i = 0; i < queues.size(); ++i) {
      if (queues[i].events != stream.elements[0].str) continue;
      for (const EventEntry& e : decode_entries(stream.elements[1])) {
        print(queues[i].queue, e, json);
        at[i] = e.entry_id;
      }
    }
  }
  return true;
}

// These queues, read on one connection: what is kept, then (with follow)
// whatever comes, for ever. One XREAD serves them all, so entries of
// different queues print in the order the server gives.
void read_queues(ConnectionOptions options, const std::vector<QueueKeys>& queues, const EventsArgs& a) {
  options.command_timeout = kBlock + std::chrono::seconds(10);
  Executor x(options);
  std::vector<std::string> at;
  for (const QueueKeys& q : queues) at.push_back(start_of(x, q, a.from));
  while (read_once(x, queues, at, a.json, std::nullopt)) {
  }
  while (a.follow) read_once(x, queues, at, a.json, kBlock);
}

int run_events(Tool& tool, const EventsArgs& a) {
  std::vector<QueueKeys> queues;
  for (const std::string& name : a.queues) queues.emplace_back(name);
  const ConnectionOptions options = tool.options();
  Executor x(options);
  std::vector<Reply> lengths;
  {
    std::vector<Command> reads;
    for (const QueueKeys& q : queues) reads.push_back(events_read(q));
    lengths = x.pipeline(reads);
  }
  for (std::size_t i = 0; i < queues.size(); ++i) {
    if (decode_events(lengths[i]) == 0) {
      say("note: queue " + queues[i].queue +
          " keeps no events (its meta has no events length): nothing new will be written to its stream");
    }
  }
  // A cluster keeps each queue's stream on its own shard, and one XREAD
  // reads one shard: a connection (and a thread) per queue then.
  if (x.cluster_map() == nullptr || queues.size() == 1) {
    read_queues(options, queues, a);
    return kExitOk;
  }
  std::vector<std::thread> readers;
  std::exception_ptr failed;
  std::mutex m;
  for (const QueueKeys& q : queues) {
    readers.emplace_back([&, q] {
      try {
        read_queues(options, {q}, a);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!failed) failed = std::current_exception();
      }
    });
  }
  for (std::thread& t : readers) t.join();
  if (failed) std::rethrow_exception(failed);
  return kExitOk;
}

}  // namespace

void add_events(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<EventsArgs>();
  CLI::App* sub = app.add_subcommand("events", "the queues' events: every change of a job's state, oldest first");
  sub->add_option("queues", a->queues, "the queues")->required()->type_name("QUEUE...");
  sub->add_flag("--follow,-f", a->follow, "then wait for new entries (XREAD BLOCK) until interrupted");
  sub->add_option("--from", a->from, "start after this entry id (as printed), or $ for only new entries")
      ->type_name("ID");
  sub->add_flag("--json", a->json, "print one JSON object per line (queue, entry, time, event, id, attempt, ...)");
  sub->footer(
      "A queue keeps events when its meta has `events` (emqd's `events:` in config, 10000 by default):\n"
      "the stream emq:{QUEUE}:events holds about that many of the latest entries. Each line: the entry id,\n"
      "its time, the queue, the event (pending delayed active waiting completed dead removed progress),\n"
      "the job id and its attempt, and the error or progress when there is one.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_events(tool, *a); }; });
}

}  // namespace echomq::cli
