// emq purge QUEUE --state pending|delayed|dead [--yes]
#include <iostream>
#include <memory>

#include "echomq/job_actions.h"
#include "echomq/jobs.h"
#include "confirm.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

int purge_confirmed(Executor& x, const QueueKeys& q, JobState state, bool yes) {
  const std::string name = to_string(state);
  const std::int64_t n = count_jobs(x, q, state);
  if (n == 0) {
    say("no " + name + " jobs in queue " + q.queue);
    std::cout << "0\n";
    return kExitOk;
  }
  if (!confirmed("delete all " + std::to_string(n) + " " + name + " jobs of queue " + q.queue + ", rows and all?",
                 yes)) {
    say("nothing was deleted");
    return kExitNotFound;
  }
  const PurgeResult r = purge(x, q, state);
  std::cout << r.removed << '\n';
  if (r.refused_active > 0) {
    say(std::to_string(r.refused_active) + " ids stay in the " + name + " set: their rows say active, so cancel " +
        "refused them (emq jobs " + q.queue + " --state " + name + " lists them)");
  }
  return kExitOk;
}

namespace {

struct PurgeArgs {
  std::string queue;
  std::string state;
  bool yes = false;
};

int run_purge(Tool& tool, const PurgeArgs& a) {
  QueueKeys q(a.queue);
  std::optional<JobState> state = job_state_from(a.state);
  if (!state) {
    throw Error(ErrorKind::Invalid, "purge", "--state " + a.state + " is not a state: use pending, delayed or dead");
  }
  if (*state == JobState::Active) {
    throw Error(ErrorKind::Invalid, "purge",
                "--state active is refused: running jobs belong to their workers (emq pause " + q.queue +
                    " stops new claims; they then finish or are reaped)");
  }
  if (*state == JobState::Waiting) {
    throw Error(ErrorKind::Invalid, "purge",
                "--state waiting is refused: a waiting parent runs once its children finish (emq jobs " + q.queue +
                    " --state waiting lists them; emq flow show " + q.queue + " ID shows what one waits for)");
  }
  Executor x(tool.options());
  return purge_confirmed(x, q, *state, a.yes);
}

}  // namespace

void add_purge(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<PurgeArgs>();
  CLI::App* sub =
      app.add_subcommand("purge", "delete every job of one state of a queue, rows and all; prints the count");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("--state", a->state, "pending, delayed or dead (active is refused)")->required()->type_name("STATE");
  sub->add_flag("--yes,-y", a->yes, "do not ask (required when stdin is not a terminal)");
  sub->footer(
      "Each job goes through the wire's cancel, a thousand per round trip, so a row always goes with its id\n"
      "and a job a worker claims meanwhile is left to it. At most the jobs there when the purge began are\n"
      "removed. Asks first on a terminal; without one, --yes is required (exit 2 otherwise).");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_purge(tool, *a); }; });
}

}  // namespace echomq::cli
