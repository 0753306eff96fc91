// emq enqueue QUEUE [PAYLOAD|-] [--id ID] [--lane N] [--delay-ms N | --at TIME]
//             [--unique KEY [--unique-mode MODE] [--unique-for DURATION] [--strict]]
//             [--group G] [--traceparent TP [--tracestate TS]]
// emq enqueue QUEUE --ndjson FILE|- [--traceparent TP [--tracestate TS]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "text/duration.h"
#include "echomq/errors.h"
#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/trace_context.h"
#include "echomq/transitions.h"
#include "bytes_text.h"
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
  std::string unique;
  std::string unique_mode;
  std::string unique_for;
  bool strict = false;
  std::string group;
  std::string traceparent;
  std::string tracestate;
};

// The trace context the job carries: --traceparent (and --tracestate),
// else TRACEPARENT and TRACESTATE from the environment, OpenTelemetry's
// environment carrier, so that an emq run by a traced handler or script
// continues its trace. A flag that is not W3C is refused; a variable that
// is not is said and left out: the job is enqueued without it.
TraceContext trace_context_of(const EnqueueArgs& a) {
  if (!a.traceparent.empty()) {
    if (std::string why = traceparent_problem(a.traceparent); !why.empty()) {
      throw Error(ErrorKind::Invalid, "enqueue",
                  "--traceparent is not a W3C traceparent (" + why +
                      "): give 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>");
    }
    if (std::string why = tracestate_problem(a.tracestate); !why.empty()) {
      throw Error(ErrorKind::Invalid, "enqueue", "--tracestate: " + why);
    }
    return {a.traceparent, a.tracestate};
  }
  if (!a.tracestate.empty()) throw Error(ErrorKind::Invalid, "enqueue", "--tracestate needs --traceparent");
  const char* env_parent = std::getenv("TRACEPARENT");
  if (env_parent == nullptr || *env_parent == '\0') return {};
  if (std::string why = traceparent_problem(env_parent); !why.empty()) {
    say("TRACEPARENT in the environment is not a W3C traceparent (" + why + "); the job carries no trace context");
    return {};
  }
  const char* env_state = std::getenv("TRACESTATE");
  std::string state = env_state == nullptr ? "" : env_state;
  if (std::string why = tracestate_problem(state); !why.empty()) {
    say("TRACESTATE in the environment: " + why + "; the job carries TRACEPARENT alone");
    state.clear();
  }
  return {env_parent, state};
}

// `context` on a job that carries none of its own.
void carry(JobOptions& job, const TraceContext& context) {
  if (!job.traceparent.empty() || context.empty()) return;
  job.traceparent = context.traceparent;
  job.tracestate = context.tracestate;
}

// --unique, --unique-mode and --unique-for, checked: none when --unique is
// not given.
std::optional<UniqueKey> unique_of(const EnqueueArgs& a) {
  if (a.unique.empty()) {
    if (!a.unique_mode.empty() || !a.unique_for.empty() || a.strict) {
      throw Error(ErrorKind::Invalid, "enqueue", "--unique-mode, --unique-for and --strict need --unique KEY");
    }
    return std::nullopt;
  }
  if (!valid_unique_key(a.unique)) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--unique '" + a.unique.substr(0, 40) +
                    "' is not a unique key: use 1-128 bytes of A-Z a-z 0-9 _ . : - (hash anything longer)");
  }
  UniqueKey u{a.unique, std::nullopt, 0};
  if (!a.unique_mode.empty()) {
    u.mode = unique_mode_from(a.unique_mode);
    if (!u.mode) {
      throw Error(ErrorKind::Invalid, "enqueue",
                  "--unique-mode " + a.unique_mode.substr(0, 40) + ": use finished, started, window or replace");
    }
  }
  if (!a.unique_for.empty()) {
    const std::optional<std::int64_t> ms = daemon::parse_duration_ms(a.unique_for);
    if (!ms || *ms < 1 || *ms > 1000000000000) {
      throw Error(
          ErrorKind::Invalid, "enqueue",
          "--unique-for " + a.unique_for.substr(0, 40) + " is not a window: use a duration such as 30s, 10m, 1h");
    }
    u.for_ms = *ms;
  }
  return u;
}

// Whether an enqueue that enqueued nothing met its unique key held by
// another job, rather than its own id already there.
bool key_held(const std::string& id, const KeyHolder& holder) { return !holder.id.empty() && holder.id != id; }

// What an enqueue that met its key held did, for stderr: a duplicate, or
// the holder given this payload (replace).
std::string key_held_text(EnqueueResult r, const KeyHolder& holder, const std::string& key, bool due) {
  if (r == EnqueueResult::Replaced) {
    return "replaced: " + holder.id + " (" + holder.state + "), which holds unique key " + key +
           ", now has this payload" + (due ? " and due time" : "") + "; nothing else was enqueued";
  }
  return "duplicate: its unique key is held by " + holder.id + " (" + holder.state + "); nothing was enqueued";
}

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
  if (!a.group.empty()) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--ndjson takes each job's group from its line (\"group\"); drop --group");
  }
  if (!a.unique.empty() || !a.unique_mode.empty() || !a.unique_for.empty() || a.strict) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--ndjson takes each job's unique key from its line (unique, unique_mode, unique_for_ms); drop "
                "--unique, --unique-mode, --unique-for and --strict");
  }

  const TraceContext context = trace_context_of(a);
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
      o.job = j.job;
      o.group = j.group;
      carry(o.job, context);
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
      KeyHolder holder;
      const EnqueueResult r = decode_enqueue(replies[k], &holder);
      if (r != EnqueueResult::Enqueued && ++duplicates <= kBadLinesShown) {
        const std::string line = std::to_string(j.line);
        say(key_held(j.id, holder)
                ? "line " + line + ": " + key_held_text(r, holder, j.job.unique->key, j.delay_ms || j.at_ms)
                : "duplicate: " + j.id + " (line " + line + ") already exists; nothing was changed");
      }
      out += holder.id.empty() ? j.id : terminal_text(holder.id);
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
  EnqueueOptions options;
  options.job.unique = unique_of(a);
  if (!a.group.empty()) check_group_name(a.group);
  options.group = a.group;
  carry(options.job, trace_context_of(a));
  const bool from_stdin = a.payload_given->count() == 0 || a.payload == "-";
  const std::string payload = from_stdin ? read_stdin("the payload") : a.payload;

  Executor x(tool.options());
  options.lane = static_cast<int>(a.lane);  // in range, checked above
  std::optional<std::int64_t> server_now;
  options.due_ms = due_ms(delay, at, server_now, x);
  // Registered first, so that a queue holding a job is always listed.
  register_queues(x, {q.queue});
  KeyHolder holder;
  const EnqueueResult r = decode_enqueue(x.eval(enqueue_call(q, id, payload, options)), &holder);
  // The job that stands for this one: its own id, or the key's holder.
  std::cout << (holder.id.empty() ? id : terminal_text(holder.id)) << '\n';
  if (key_held(id, holder)) {
    say(key_held_text(r, holder, a.unique, options.due_ms.has_value()));
  } else if (r == EnqueueResult::Duplicate) {
    say("duplicate: " + id + " already exists in queue " + q.queue + "; nothing was changed");
  }
  return r == EnqueueResult::Duplicate && a.strict ? kExitRunning : kExitOk;
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
  sub->add_option("--group", a->group, "the job's group (a tenant): claim shares turns between groups")
      ->type_name("GROUP");
  sub->add_option("--unique", a->unique,
                  "a unique key: at most one live job of the queue holds it (1-128 bytes of A-Z a-z 0-9 _ . : -)")
      ->type_name("KEY");
  sub->add_option("--unique-mode", a->unique_mode,
                  "how long the job holds its key: finished (default), started, window, replace")
      ->type_name("MODE");
  sub->add_option("--unique-for", a->unique_for, "window mode: hold the key this long, e.g. 10m (implies window)")
      ->type_name("DURATION");
  sub->add_flag("--strict", a->strict, "exit 4 when the key is held (a duplicate), instead of 0");
  sub->add_option("--traceparent", a->traceparent,
                  "the job's W3C trace context (default: TRACEPARENT from the environment)")
      ->type_name("TP");
  sub->add_option("--tracestate", a->tracestate, "with --traceparent: its W3C tracestate (default: TRACESTATE)")
      ->type_name("TS");
  sub->footer(
      "An id that already exists is not enqueued again: emq prints the id, says 'duplicate' on stderr,\n"
      "and exits 0, so producers may retry safely with --id.\n"
      "\n"
      "--unique KEY: while a live job of the queue holds KEY nothing is enqueued: emq prints that job's\n"
      "id, says 'duplicate' (and its state) on stderr, and exits 0 (4 with --strict). Modes: finished\n"
      "(held until the job completes or dies), started (until first claimed), window (--unique-for,\n"
      "whatever the job does), replace (a pending or delayed holder takes this payload and due time).\n"
      "\n"
      "--traceparent (else TRACEPARENT from the environment, as a traced handler has it): the job joins\n"
      "that trace; emqd's span for it is a child of that context.\n"
      "\n"
      "--ndjson: each line {\"payload\": ...} or {\"payload_b64\": \"...\"}, optionally \"id\", \"lane\",\n"
      "\"delay_ms\", \"at\", \"group\". A payload that is not a JSON string is sent as its compact JSON\n"
      "text. Every line is checked first: a bad line is named with its number and nothing is enqueued\n"
      "(exit 2). Then the jobs go a thousand per round trip; one id per line is printed, in input order,\n"
      "and the count and rate on stderr.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_enqueue(tool, *a); }; });
}

}  // namespace echomq::cli
