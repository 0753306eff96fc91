// emq jobs QUEUE [--state pending|active|delayed|dead|waiting] [--limit N] [--offset N] [--reverse] [--json]
// emq jobs QUEUE --unique KEY [--json]
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/jobs.h"
#include "echomq/unique.h"
#include "bytes_text.h"
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
  std::string unique;
  CLI::Option* state_given = nullptr;
};

// The job holding a unique key: its id on stdout (for emq wait, emq
// inspect), the lock's story on stderr; exit 1 when no live job holds it.
int run_unique(Tool& tool, const JobsArgs& a, const QueueKeys& q) {
  if (a.state_given->count() > 0 || a.offset != 0 || a.reverse) {
    throw Error(ErrorKind::Invalid, "jobs",
                "--unique finds the one job holding a key: drop --state, --offset, --reverse");
  }
  Executor x(tool.options());
  const UniqueLock l = read_unique_lock(x, q, a.unique);
  if (a.json) {
    nlohmann::ordered_json out = {
        {"queue", q.queue},
        {"unique", l.key},
        {"held", l.held},
        {"holder", l.held ? nlohmann::ordered_json(l.points_at) : nullptr},
        {"state", l.held ? nlohmann::ordered_json(l.holder_state) : nullptr},
        {"mode", l.holder_mode.empty() ? nullptr : nlohmann::ordered_json(l.holder_mode)},
        {"lock", l.points_at.empty() ? nullptr : nlohmann::ordered_json(l.points_at)},
        {"window_left_ms", l.window_left_ms >= 0 ? nlohmann::ordered_json(l.window_left_ms) : nullptr}};
    std::cout << json_text(out, 2) << '\n';
    return l.held ? kExitOk : kExitNotFound;
  }
  if (l.held) std::cout << terminal_text(l.points_at) << '\n';
  say("unique key " + l.key + " of queue " + q.queue + ": " + describe(l) +
      (l.held && !l.holder_mode.empty() ? ", mode " + l.holder_mode : ""));
  return l.held ? kExitOk : kExitNotFound;
}

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
  if (!a.unique.empty()) return run_unique(tool, a, q);
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
  a->state_given =
      sub->add_option("--state", a->state, "pending (default), active, delayed, dead or waiting")->type_name("STATE");
  sub->add_option("--unique", a->unique, "the job holding this unique key: its id; exit 1 when no live job holds it")
      ->type_name("KEY");
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
