// emq pause QUEUE / emq resume QUEUE / emq cancel QUEUE ID
#include <algorithm>
#include <iostream>
#include <memory>

#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct ControlArgs {
  std::string queue;
  std::string id;
};

int run_pause(Tool& tool, const ControlArgs& a, bool paused) {
  QueueKeys q(a.queue);
  Executor x(tool.options());
  if (paused) {
    pause(x, q);
  } else {
    resume(x, q);
  }
  warn_if_unknown(x, q);
  std::cout << (paused ? "paused " : "resumed ") << q.queue << '\n';
  return kExitOk;
}

int run_cancel(Tool& tool, const ControlArgs& a) {
  QueueKeys q(a.queue);
  check_wire_gate(a.id);  // a listed id may be any shape a peer wrote
  Executor x(tool.options());
  const Reply state = x.command({"HGET", q.row(a.id), "state"});
  switch (cancel(x, q, a.id)) {
    case CancelResult::Removed:
      std::cout << "cancelled " << a.id << '\n';
      if (state.type == Reply::Type::String && state.str == "waiting") {
        say("note: " + a.id +
            " was a parent waiting for its children: they still run, and their news no longer runs it; "
            "cancel them too if they should not run");
      }
      return kExitOk;
    case CancelResult::NotFound:
      say("no job " + a.id + " in queue " + q.queue + "; nothing was cancelled");
      return kExitNotFound;
    case CancelResult::Refused: say(cancel_refusal(x, q, a.id)); return kExitRunning;
  }
  return kExitServer;  // unreachable: every CancelResult is handled above
}

}  // namespace

void warn_if_unknown(Executor& x, const QueueKeys& q) {
  std::vector<std::string> known = known_queues(x);
  if (!std::binary_search(known.begin(), known.end(), q.queue)) {
    say("note: " + q.queue + " is not a known queue (not in " + std::string(kQueuesKey) + "); check the name");
  }
}

void add_control(CLI::App& app, Tool& tool) {
  for (bool paused : {true, false}) {
    auto a = std::make_shared<ControlArgs>();
    CLI::App* sub =
        app.add_subcommand(paused ? "pause" : "resume", paused ? "stop claims from a queue (running jobs go on)"
                                                               : "let claims from a paused queue go on");
    sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
    sub->callback([&tool, a, paused] { tool.run = [&tool, a, paused] { return run_pause(tool, *a, paused); }; });
  }

  auto c = std::make_shared<ControlArgs>();
  CLI::App* cancel_cmd =
      app.add_subcommand("cancel",
                         "delete a job that is not running (pending, delayed, dead, kept completed, or a parent "
                         "waiting for its children)");
  cancel_cmd->add_option("queue", c->queue, "the queue")->required()->type_name("QUEUE");
  cancel_cmd->add_option("id", c->id, "the job id (JOB_...)")->required()->type_name("ID");
  cancel_cmd->footer("Exit 0 cancelled, 1 no such job, 4 refused: the job is running.");
  cancel_cmd->callback([&tool, c] { tool.run = [&tool, c] { return run_cancel(tool, *c); }; });
}

}  // namespace echomq::cli
