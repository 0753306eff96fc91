// emq queues [--json] / emq forget QUEUE
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/queues.h"
#include "echomq/stats.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct QueuesArgs {
  std::string queue;
  bool json = false;
};

int run_queues(Tool& tool, const QueuesArgs& a) {
  Executor x(tool.options());
  std::vector<std::string> names = known_queues(x);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const std::string& name : names) {
    // A peer may have registered a name no command here could take: say
    // so instead of printing bytes that could be anything.
    if (!valid_queue_name(name)) {
      say("skipping '" + name.substr(0, 80) + "' in " + std::string(kQueuesKey) + ": not a valid queue name");
      continue;
    }
    if (a.json) {
      out.push_back(name);
    } else {
      std::cout << name << '\n';
    }
  }
  if (a.json) std::cout << out.dump() << '\n';
  if (names.empty() && !a.json) say("no queues are known yet (" + std::string(kQueuesKey) + " is empty)");
  return kExitOk;
}

int run_forget(Tool& tool, const QueuesArgs& a) {
  QueueKeys q(a.queue);
  Executor x(tool.options());
  const ForgetResult r = forget_queue(x, q);
  if (r.forgotten) {
    std::cout << "forgot " << q.queue << '\n';
    return kExitOk;
  }
  const std::int64_t held = r.pending + r.active + r.delayed + r.dead;
  if (held == 0) {
    say(q.queue + " is not in " + std::string(kQueuesKey) + "; nothing to forget");
    return kExitNotFound;
  }
  std::string left;
  for (auto [n, name] :
       {std::pair{r.pending, "pending"}, {r.active, "active"}, {r.delayed, "delayed"}, {r.dead, "dead"}}) {
    if (n > 0) left += (left.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  }
  say(q.queue + " still holds " + left + " and stays in " + std::string(kQueuesKey) +
      ": purge them (emq purge QUEUE --state STATE) or let them finish first");
  return kExitRunning;
}

}  // namespace

void add_queues(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<QueuesArgs>();
  CLI::App* sub = app.add_subcommand("queues", "the names of the queues known to speakers ({emq}:queues), sorted");
  sub->add_flag("--json", a->json, "print a JSON array of names");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_queues(tool, *a); }; });

  auto f = std::make_shared<QueuesArgs>();
  CLI::App* forget = app.add_subcommand("forget", "take a queue off {emq}:queues, once it holds no jobs");
  forget->add_option("queue", f->queue, "the queue")->required()->type_name("QUEUE");
  forget->footer(
      "Exit 0 forgotten, 1 it was not known, 4 refused: it still holds jobs (stderr says how many of\n"
      "each). Its counters and meta stay. emq enqueue, or a daemon that serves it, lists it again.");
  forget->callback([&tool, f] { tool.run = [&tool, f] { return run_forget(tool, *f); }; });
}

}  // namespace echomq::cli
