// emq enqueue QUEUE [PAYLOAD|-] [--id ID] [--lane N] [--delay-ms N]
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emq/output.h"
#include "emq/tool.h"

namespace echomq::cli {

namespace {

// Ten years: far enough for any real schedule, and far from overflowing
// server time + delay.
constexpr std::int64_t kMaxDelayMs = 10LL * 365 * 24 * 3600 * 1000;

struct EnqueueArgs {
  std::string queue;
  std::string payload;
  CLI::Option* payload_given = nullptr;
  std::string id;
  int lane = 0;
  std::int64_t delay_ms = 0;
  CLI::Option* delay_given = nullptr;
};

// All of stdin, byte for byte: a payload may hold NULs or any other byte.
std::string read_stdin() {
  if (::isatty(STDIN_FILENO)) say("reading the payload from stdin; end it with Ctrl-D");
  std::string data;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) data.append(buf, n);
  if (std::ferror(stdin)) throw Error(ErrorKind::Invalid, "enqueue", "cannot read the payload from stdin");
  return data;
}

int run_enqueue(Tool& tool, const EnqueueArgs& a) {
  // Every argument is checked before the server is asked anything.
  QueueKeys q(a.queue);
  if (a.lane < kMinLane || a.lane > kMaxLane) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--lane " + std::to_string(a.lane) + " is out of range: use " + std::to_string(kMinLane) + ".." +
                    std::to_string(kMaxLane) + " (lower lanes are claimed first)");
  }
  const bool delayed = a.delay_given->count() > 0;
  if (delayed && (a.delay_ms < 0 || a.delay_ms > kMaxDelayMs)) {
    throw Error(ErrorKind::Invalid, "enqueue",
                "--delay-ms " + std::to_string(a.delay_ms) + " is out of range: use 0.." + std::to_string(kMaxDelayMs));
  }
  std::string id = a.id.empty() ? mint_job_id() : a.id;
  check_job_id(id);
  const bool from_stdin = a.payload_given->count() == 0 || a.payload == "-";
  const std::string payload = from_stdin ? read_stdin() : a.payload;

  Executor x(tool.options());
  EnqueueOptions options;
  options.lane = a.lane;
  // The server's clock, never ours: due times are compared with TIME.
  if (delayed) options.due_ms = x.server_time_ms() + a.delay_ms;
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
  CLI::App* sub = app.add_subcommand("enqueue", "add a job; prints its id");
  sub->add_option("queue", a->queue, "the queue: 1-64 bytes of A-Z a-z 0-9 _ . -")->required()->type_name("QUEUE");
  a->payload_given = sub->add_option("payload", a->payload,
                                     "the payload; '-' or nothing reads it from stdin, byte for byte "
                                     "(put -- before a payload that starts with -)")
                         ->type_name("PAYLOAD");
  sub->add_option("--id", a->id, "the job id (JOB_...); default: a new minted id")->type_name("ID");
  sub->add_option("--lane", a->lane, "-1000..1000, lower lanes are claimed first (default 0)")->type_name("N");
  a->delay_given = sub->add_option("--delay-ms", a->delay_ms, "due this many ms from now, by the server's clock")->type_name("N");
  sub->footer(
      "An id that already exists is not enqueued again: emq prints the id, says 'duplicate' on stderr,\n"
      "and exits 0, so producers may retry safely with --id.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_enqueue(tool, *a); }; });
}

}  // namespace echomq::cli
