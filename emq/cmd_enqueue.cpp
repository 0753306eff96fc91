// emq enqueue QUEUE [PAYLOAD|-] [--id ID] [--lane N] [--delay-ms N | --at TIME]
// emq enqueue QUEUE --ndjson FILE|-
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "echomq/errors.h"
#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "ndjson_jobs.h"
#include "output.h"
#include "time_arg.h"
#include "tool.h"

namespace echomq::cli {

namespace {

// Bad lines named one by one before a summary, so a wholly wrong file
// does not flood the terminal.
constexpr std::size_t kBadLinesShown = 20;

struct EnqueueArgs {
  std::string queue;
  std::string payload;
  CLI::Option* payload_given = nullptr;
  std::string id;
  std::int64_t lane = 0;
  CLI::Option* lane_given = nullptr;
  std::int64_t delay_ms = 0;
  CLI::Option* delay_given = nullptr;
  std::string at;
  CLI::Option* at_given = nullptr;
  std::string ndjson;
  CLI::Option* ndjson_given = nullptr;
};

// When the job is due, if it is delayed: now on the server's clock (never
// ours) plus a delay, or an absolute time.
std::optional<std::int64_t> due_ms(std::optional<std::int64_t> delay, std::optional<std::int64_t> at,
                                   std::optional<std::int64_t>& server_now, Executor& x) {
  if (at) return at;
  if (!delay) return std::nullopt;
  if (!server_now) server_now = x.server_time_ms();
  return *server_now + *delay;
}

int run_ndjson(Tool& tool, const EnqueueArgs& a, const QueueKeys& q) {
  for (CLI::Option* o : {a.payload_given, a.lane_given, a.delay_given, a.at_given}) {
    if (o->count() > 0) {
      throw Error(ErrorKind::Invalid, "enqueue",
                  "--ndjson takes each job's payload, id, lane, delay_ms and at from its line; drop " + o->get_name());
    }
  }
  if (!a.id.empty())
    throw Error(ErrorKind::Invalid, "enqueue", "--ndjson takes each job's id from its line; drop --id");

  const auto t0 = std::chrono::steady_clock::now();
  const NdjsonInput in =
      parse_ndjson(a.ndjson == "-" ? read_stdin("NDJSON jobs") : read_file(a.ndjson, "--ndjson file"));
  if (!in.errors.empty()) {
    const std::string source = a.ndjson == "-" ? "stdin" : a.ndjson;
    for (std::size_t i = 0; i < in.errors.size() && i < kBadLinesShown; ++i) {
      say(source + ":" + std::to_string(in.errors[i].line) + ": " + in.errors[i].message);
    }
    if (in.errors.size() > kBadLinesShown) {
      say("... and " + std::to_string(in.errors.size() - kBadLinesShown) + " more bad lines");
    }
    throw Error(ErrorKind::Invalid, "enqueue",
                std::to_string(in.errors.size()) + " bad line(s) in " + source + "; nothing was enqueued");
  }
  if (in.jobs.empty()) {
    say("no jobs in the input; nothing was enqueued");
    return kExitOk;
  }

  Executor x(tool.options());
  register_queues(x, {q.queue});
  const auto t1 = std::chrono::steady_clock::now();
  std::optional<std::int64_t> server_now;
  std::size_t sent = 0, duplicates = 0;
  std::vector<ScriptCall> calls;
  std::string out;
  while (sent < in.jobs.size()) {
    const std::size_t end = std::min(in.jobs.size(), sent + kActionBatch);
    calls.clear();
    out.clear();
    for (std::size_t i = sent; i < end; ++i) {
      const NdjsonJob& j = in.jobs[i];
      EnqueueOptions o;
      o.lane = j.lane;
      o.due_ms = due_ms(j.delay_ms, j.at_ms, server_now, x);
      calls.push_back(enqueue_call(q, j.id, j.payload, o));
    }
    std::vector<Reply> replies = x.eval_batch(calls);
    for (std::size_t k = 0; k < replies.size(); ++k) {
      const NdjsonJob& j = in.jobs[sent + k];
      if (replies[k].is_error()) {
        std::cout << out << std::flush;
        say("line " + std::to_string(j.line) + " was refused by the server: " + replies[k].str +
            "; the lines before it were sent");
        return kExitServer;
      }
      if (decode_enqueue(replies[k]) == EnqueueResult::Duplicate) {
        if (++duplicates <= kBadLinesShown)
          say("duplicate: " + j.id + " (line " + std::to_string(j.line) + ") already exists; nothing was changed");
      }
      out += j.id;
      out += '\n';
    }
    std::cout << out << std::flush;
    sent = end;
  }
  const auto t2 = std::chrono::steady_clock::now();
  const double read_s = std::chrono::duration<double>(t1 - t0).count();
  const double send_s = std::chrono::duration<double>(t2 - t1).count();
  char summary[200];
  std::snprintf(summary, sizeof summary,
                "enqueued %zu jobs (%zu duplicates) in %.3f s, %.0f jobs/s; read and checked in %.3f s",
                in.jobs.size() - duplicates, duplicates, send_s, send_s > 0 ? in.jobs.size() / send_s : 0.0, read_s);
  say(summary);
  return kExitOk;
}

int run_enqueue(Tool& tool, const EnqueueArgs& a) {
  // Every argument is checked before the server is asked anything.
  QueueKeys q(a.queue);
  if (a.ndjson_given->count() > 0) return run_ndjson(tool, a, q);
  if (a.lane < kMinLane || a.lane > kMaxLane) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--lane " + std::to_string(a.lane) + " is out of range: use " + std::to_string(kMinLane) + ".." +
                    std::to_string(kMaxLane) + " (lower lanes are claimed first)");
  }
  std::optional<std::int64_t> delay;
  if (a.delay_given->count() > 0) {
    if (a.delay_ms < 0 || a.delay_ms > kMaxDelayMs) {
      throw Error(
          ErrorKind::Invalid, "enqueue",
          "--delay-ms " + std::to_string(a.delay_ms) + " is out of range: use 0.." + std::to_string(kMaxDelayMs));
    }
    delay = a.delay_ms;
  }
  std::optional<std::int64_t> at;
  if (a.at_given->count() > 0) {
    if (delay) throw Error(ErrorKind::Invalid, "enqueue", "give --delay-ms or --at, not both");
    at = parse_time_ms(a.at);
    if (!at) {
      throw Error(ErrorKind::Invalid, "enqueue",
                  "--at " + a.at.substr(0, 60) +
                      " is not a time: use RFC 3339 with a zone (2026-12-03T10:00:00Z, ...+01:00) or epoch ms");
    }
  }
  std::string id = a.id.empty() ? mint_job_id() : a.id;
  check_job_id(id);
  const bool from_stdin = a.payload_given->count() == 0 || a.payload == "-";
  const std::string payload = from_stdin ? read_stdin("the payload") : a.payload;

  Executor x(tool.options());
  EnqueueOptions options;
  options.lane = static_cast<int>(a.lane);  // in range, checked above
  std::optional<std::int64_t> server_now;
  options.due_ms = due_ms(delay, at, server_now, x);
  // Registered first, so that a queue holding a job is always listed.
  register_queues(x, {q.queue});
  EnqueueResult r = enqueue(x, q, id, payload, options);
  std::cout << id << '\n';
  if (r == EnqueueResult::Duplicate) {
    say("duplicate: " + id + " already exists in queue " + q.queue + "; nothing was changed");
  }
  return kExitOk;
}

}  // namespace

void add_enqueue(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<EnqueueArgs>();
  CLI::App* sub = app.add_subcommand("enqueue", "add a job, or many from NDJSON; prints each id");
  sub->add_option("queue", a->queue, "the queue: 1-64 bytes of A-Z a-z 0-9 _ . -")->required()->type_name("QUEUE");
  a->payload_given = sub->add_option("payload", a->payload,
                                     "the payload; '-' or nothing reads it from stdin, byte for byte "
                                     "(put -- before a payload that starts with -)")
                         ->type_name("PAYLOAD");
  sub->add_option("--id", a->id, "the job id (JOB_...); default: a new minted id")->type_name("ID");
  a->lane_given = add_number_option(sub, "--lane", a->lane, "-1000..1000, lower lanes are claimed first (default 0)")
                      ->type_name("N");
  a->delay_given = add_number_option(sub, "--delay-ms", a->delay_ms, "due this many ms from now, by the server's clock")
                       ->type_name("N");
  a->at_given =
      sub->add_option("--at", a->at, "due at this time: RFC 3339 with a zone, or epoch ms")->type_name("TIME");
  a->ndjson_given =
      sub->add_option("--ndjson", a->ndjson, "many jobs, one JSON object per line, from FILE or - (stdin)")
          ->type_name("FILE");
  sub->footer(
      "An id that already exists is not enqueued again: emq prints the id, says 'duplicate' on stderr,\n"
      "and exits 0, so producers may retry safely with --id.\n"
      "\n"
      "--ndjson: each line {\"payload\": ...} or {\"payload_b64\": \"...\"}, optionally \"id\", \"lane\",\n"
      "\"delay_ms\", \"at\". A payload that is not a JSON string is sent as its compact JSON text. Every\n"
      "line is checked first: a bad line is named with its number and nothing is enqueued (exit 2).\n"
      "Then the jobs go a thousand per round trip; one id per line is printed, in input order, and\n"
      "the count and rate on stderr.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_enqueue(tool, *a); }; });
}

}  // namespace echomq::cli
