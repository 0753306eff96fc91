// emq wait QUEUE ID [--timeout S]: by the events stream when the queue
// keeps events, by polling otherwise (echomq/wait.h).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/wait.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

// The longest --timeout, as the Python and Node speakers' wait take it:
// about 31 years, and within what a clock's deadline can hold.
constexpr double kMaxTimeoutS = 1e9;

struct WaitArgs {
  std::string queue;
  std::string id;
  double timeout_s = 0;
  CLI::Option* timeout_given = nullptr;
};

// --timeout as typed, for the messages that name it.
std::string timeout_text(const WaitArgs& a) { return a.timeout_given->results().front().substr(0, 40); }

// The bytes as they are; a newline after them only for a person.
void print_raw(const std::string& bytes) {
  std::cout << bytes;
  if (::isatty(STDOUT_FILENO) && (bytes.empty() || bytes.back() != '\n')) std::cout << '\n';
  std::cout << std::flush;
}

int run_wait(Tool& tool, const WaitArgs& a) {
  QueueKeys q(a.queue);
  q.row(a.id);  // the wire's gate only: a listed id may be any shape a peer wrote
  const bool bounded = a.timeout_given->count() > 0;
  if (bounded && !(a.timeout_s > 0 && a.timeout_s <= kMaxTimeoutS)) {
    throw Error(ErrorKind::Invalid, "wait",
                "--timeout " + timeout_text(a) +
                    " is out of range: a number of seconds above 0 and at most 10^9 (about 31 years); leave it "
                    "out to wait as long as it takes");
  }
  Executor x(tool.options());
  // A daemon publishes its policy in meta; with keep_completed_ms 0 a
  // completed row is deleted at once and its result with it.
  const std::vector<Reply> at = x.pipeline({{"HGET", q.meta, "keep_completed_ms"}, job_end_read(q, a.id)});
  if (at[0].is_error()) throw error_from_reply("wait", at[0].str);
  const bool keeps_none = at[0].type == Reply::Type::String && at[0].str == "0";
  const JobEnd first = job_end_of(at[1]);
  if (first.how == JobEnd::How::Gone) {
    say_no_job(q.queue, a.id);
    return kExitNotFound;
  }
  if (keeps_none && first.how != JobEnd::How::Completed) {
    say("note: queue " + q.queue +
        " keeps no completed rows (keep_completed_s: 0): its result can never be seen; "
        "emq wait will only tell that the job left the queue");
  }
  std::optional<std::chrono::milliseconds> timeout;
  if (bounded) timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(a.timeout_s * 1000)));
  Waiter waiter(tool.options());
  const JobEnd end = waiter.wait(q, {a.id}, timeout).front();
  switch (end.how) {
    case JobEnd::How::Completed: print_raw(end.result); return kExitOk;
    case JobEnd::How::Dead:
      // Whole on stdout, where a script reads it; this line says so.
      say(a.id + " died after " + end.attempts + (end.attempts == "1" ? " attempt" : " attempts") +
          (end.error.empty() ? "; it left no error" : "; its last error is on stdout"));
      print_raw(end.error);
      return kExitNotFound;
    case JobEnd::How::Gone:
      say(a.id + (keeps_none ? " completed; its row was deleted at once (keep_completed_s: 0), so there is no "
                               "result to show"
                             : " left queue " + q.queue +
                                   " without a row to show: it completed in a queue that "
                                   "keeps no completed rows (keep_completed_s: 0), or it was cancelled"));
      return kExitOk;
    case JobEnd::How::NotEnded: break;
  }
  say(a.id + " is still " + end.state + " after " + timeout_text(a) + " s");
  return kExitTimeout;
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
