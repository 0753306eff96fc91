// emq promote QUEUE ID...: run delayed jobs now (the wire's promote_job).
#include <iostream>
#include <memory>

#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct PromoteArgs {
  std::string queue;
  std::vector<std::string> ids;
};

int run_promote(Tool& tool, const PromoteArgs& a) {
  QueueKeys q(a.queue);
  for (const std::string& id : a.ids) check_wire_gate(id);  // a listed id may be any shape a peer wrote
  Executor x(tool.options());
  std::vector<PromoteJobResult> r = promote_jobs(x, q, a.ids);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    if (r[i] == PromoteJobResult::Moved) {
      ++moved;
    } else {
      say(a.ids[i] + " is not in the delayed set of queue " + q.queue + "; left as it is");
    }
  }
  std::cout << moved << '\n';
  return moved == a.ids.size() ? kExitOk : kExitNotFound;
}

}  // namespace

void add_promote(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<PromoteArgs>();
  CLI::App* sub = app.add_subcommand("promote", "run delayed jobs now: each goes to pending at its lane");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("ids", a->ids, "the delayed jobs' ids (JOB_...)")->required()->type_name("ID...");
  sub->footer("Prints how many moved. Exit 0 every job moved, 1 one or more was not delayed (left as it is).");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_promote(tool, *a); }; });
}

}  // namespace echomq::cli
