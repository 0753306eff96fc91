// emq wait QUEUE ID [--timeout S]
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

// Polling starts quick (a job that takes milliseconds answers in
// milliseconds) and backs off, so a long wait costs the server little.
constexpr std::chrono::milliseconds kFirstPoll{5};
constexpr std::chrono::milliseconds kMaxPoll{500};

struct WaitArgs {
  std::string queue;
  std::string id;
  double timeout_s = 0;
  CLI::Option* timeout_given = nullptr;
};

struct Seen {
  std::optional<std::string> state;  // nullopt: no row
  std::optional<std::string> result;
  std::optional<std::string> error;
  std::string attempts;
};

Seen look(Executor& x, const std::string& row) {
  Reply r = x.command({"HMGET", row, "state", "result", "error", "attempts"});
  if (r.is_error()) throw error_from_reply("wait", r.str);
  Seen s;
  if (r.elements.size() != 4) return s;
  auto str = [&](std::size_t i) -> std::optional<std::string> {
    if (r.elements[i].type != Reply::Type::String) return std::nullopt;
    return r.elements[i].str;
  };
  s.state = str(0);
  s.result = str(1);
  s.error = str(2);
  s.attempts = str(3).value_or("0");
  return s;
}

// The bytes as they are; a newline after them only for a person.
void print_raw(const std::string& bytes) {
  std::cout << bytes;
  if (::isatty(STDOUT_FILENO) && (bytes.empty() || bytes.back() != '\n')) std::cout << '\n';
  std::cout << std::flush;
}

int run_wait(Tool& tool, const WaitArgs& a) {
  QueueKeys q(a.queue);
  const std::string row = q.row(a.id);  // the wire's gate only: a listed id may be any shape a peer wrote
  const bool bounded = a.timeout_given->count() > 0;
  if (bounded && !(a.timeout_s > 0 && std::isfinite(a.timeout_s))) {
    throw Error(ErrorKind::Invalid, "wait", "--timeout must be a number of seconds > 0");
  }
  Executor x(tool.options());

  // A daemon publishes its policy in meta; with keep_completed_ms 0 a
  // completed row is deleted at once and its result with it.
  Reply keep = x.command({"HGET", q.meta, "keep_completed_ms"});
  if (keep.is_error()) throw error_from_reply("wait", keep.str);
  const bool keeps_none = keep.type == Reply::Type::String && keep.str == "0";

  Seen s = look(x, row);
  if (!s.state) {
    say_no_job(q.queue, a.id);
    return kExitNotFound;
  }
  if (keeps_none && *s.state != "completed") {
    say("note: queue " + q.queue +
        " keeps no completed rows (keep_completed_s: 0): its result can never be seen; "
        "emq wait will only tell that the job left the queue");
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(a.timeout_s);
  auto step = kFirstPoll;
  while (true) {
    if (*s.state == "completed") {
      print_raw(s.result.value_or(""));
      return kExitOk;
    }
    if (*s.state == "dead") {
      say(a.id + " died after " + s.attempts + " attempts; its last error:");
      print_raw(s.error.value_or(""));
      return kExitNotFound;
    }
    if (bounded && std::chrono::steady_clock::now() >= until) {
      say(a.id + " is still " + *s.state + " after " + std::to_string(a.timeout_s).substr(0, 8) + " s");
      return kExitTimeout;
    }
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, kMaxPoll);
    s = look(x, row);
    if (!s.state) {
      say(a.id + (keeps_none ? " completed; its row was deleted at once (keep_completed_s: 0), so there is no "
                               "result to show"
                             : " left queue " + q.queue +
                                   " without a row to show: it completed in a queue that "
                                   "keeps no completed rows (keep_completed_s: 0), or it was cancelled"));
      return kExitOk;
    }
  }
}

}  // namespace

void add_wait(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<WaitArgs>();
  CLI::App* sub = app.add_subcommand("wait", "wait for a job to complete or die; prints its result or its error");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("id", a->id, "the job id (JOB_...)")->required()->type_name("ID");
  a->timeout_given =
      add_number_option(sub, "--timeout", a->timeout_s, "give up after S seconds (default: wait as long as it takes)")
          ->type_name("S");
  sub->footer(
      "Exit 0 completed (stdout: the result, byte for byte), 1 died (stdout: its last error) or no such\n"
      "job, 5 not ended within --timeout. A queue that keeps no completed rows (keep_completed_s: 0)\n"
      "deletes the row on completion: emq wait then says the job left the queue and exits 0.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_wait(tool, *a); }; });
}

}  // namespace echomq::cli
