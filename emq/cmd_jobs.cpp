// emq jobs QUEUE [--state pending|active|delayed|dead|waiting] [--limit N] [--offset N] [--reverse] [--json]
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/jobs.h"
#include "job_table.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr std::int64_t kMaxPage = 10000;
constexpr std::size_t kPreviewBytes = 40;

struct JobsArgs {
  std::string queue;
  std::string state = "pending";
  std::int64_t limit = 20;
  std::int64_t offset = 0;
  bool reverse = false;
  bool json = false;
};

void print_json(const QueueKeys& q, JobState state, const ListArgs& args, const JobPage& page) {
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const JobSummary& j : page.jobs) jobs.push_back(job_json(state, j));
  nlohmann::ordered_json out = {{"queue", q.queue},
                                {"state", to_string(state)},
                                {"order", args.order == ListOrder::Ascending ? "ascending" : "descending"},
                                {"total", page.total},
                                {"offset", args.offset},
                                {"jobs", std::move(jobs)}};
  std::cout << out.dump(2) << '\n';
}

int run_jobs(Tool& tool, const JobsArgs& a) {
  QueueKeys q(a.queue);
  const std::optional<JobState> state = state_option(a.state, "jobs");
  if (a.limit <= 0 || a.limit > kMaxPage) {
    throw Error(ErrorKind::Invalid, "jobs",
                "--limit " + std::to_string(a.limit) + " is out of range: use 1.." + std::to_string(kMaxPage));
  }
  if (a.offset < 0) throw Error(ErrorKind::Invalid, "jobs", "--offset " + std::to_string(a.offset) + " must be >= 0");

  ListArgs args;
  args.state = *state;
  args.offset = a.offset;
  args.limit = a.limit;
  args.order = default_order(*state);
  if (a.reverse) args.order = args.order == ListOrder::Ascending ? ListOrder::Descending : ListOrder::Ascending;
  args.preview_bytes = a.json ? 200 : kPreviewBytes;

  Executor x(tool.options());
  const JobPage page = list_jobs(x, q, args);
  if (a.json) {
    print_json(q, *state, args, page);
    return kExitOk;
  }
  const std::string name = to_string(*state);
  if (page.jobs.empty()) {
    say(page.total == 0 ? "no " + name + " jobs in queue " + q.queue
                        : "no " + name + " jobs at offset " + std::to_string(a.offset) + "; queue " + q.queue +
                              " has " + std::to_string(page.total));
    return kExitOk;
  }
  print_job_table(*state, page.jobs);
  const std::int64_t last = a.offset + static_cast<std::int64_t>(page.jobs.size());
  if (a.offset > 0 || last < page.total) {
    std::string note = "showing " + std::to_string(a.offset + 1) + "-" + std::to_string(last) + " of " +
                       std::to_string(page.total) + " " + name + " jobs";
    if (last < page.total) note += "; --offset " + std::to_string(last) + " shows the next";
    say(note);
  }
  return kExitOk;
}

}  // namespace

void add_jobs(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<JobsArgs>();
  CLI::App* sub = app.add_subcommand("jobs", "the jobs of one state of a queue, a page at a time");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("--state", a->state, "pending (default), active, delayed, dead or waiting")->type_name("STATE");
  add_number_option(sub, "--limit", a->limit, "jobs per page, 1..10000 (default 20)")->type_name("N");
  add_number_option(sub, "--offset", a->offset, "skip the first N in the order shown (default 0)")->type_name("N");
  sub->add_flag("--reverse", a->reverse, "the other order (e.g. oldest deaths first)");
  sub->add_flag("--json", a->json, "print one JSON object: total, offset and the page of jobs");
  sub->footer(
      "Order: pending in claim order (lane, then id); active by lease deadline and delayed by due time,\n"
      "soonest first; dead newest death first; waiting (parents of flows) longest waiting first. Pages are read by "
      "index, so any page of any size of set\n"
      "answers at once. Payloads are previewed (not read when over 64 KiB); emq inspect shows one whole.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_jobs(tool, *a); }; });
}

}  // namespace echomq::cli
