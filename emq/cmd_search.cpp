// emq search QUEUE [--state S] [--id-prefix P] [--payload TEXT] [--error TEXT] [--limit N] [--scan N] [--json]
// emq search --id ID
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/errors.h"
#include "echomq/search.h"
#include "bytes_text.h"
#include "job_table.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr std::size_t kPreviewBytes = 40;
constexpr std::size_t kErrorColumnBytes = 60;

struct SearchOptions {
  std::string queue;
  std::string id;
  std::string state = "pending";
  std::string id_prefix;
  std::string payload;
  std::string error;
  std::int64_t limit = kDefaultSearchLimit;
  std::int64_t scan = kDefaultSearchScan;
  bool json = false;
};

void check_bounds(const SearchOptions& o) {
  if (o.limit <= 0) throw Error(ErrorKind::Invalid, "search", "--limit " + std::to_string(o.limit) + " must be > 0");
  if (o.scan <= 0) throw Error(ErrorKind::Invalid, "search", "--scan " + std::to_string(o.scan) + " must be > 0");
}

int run_id_search(Tool& tool, const SearchOptions& o) {
  if (!o.queue.empty() || !o.id_prefix.empty() || !o.payload.empty() || !o.error.empty()) {
    throw Error(ErrorKind::Invalid, "search",
                "--id finds one job across every queue: give it alone, or search one QUEUE by text");
  }
  Executor x(tool.options());
  const std::vector<FoundJob> found = find_job_by_id(x, o.id, o.json ? 200 : kPreviewBytes);
  if (o.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const FoundJob& f : found) {
      nlohmann::ordered_json j = job_json(JobState::Pending, f.job);
      j.erase("lane");
      j["queue"] = f.queue;
      out.push_back(std::move(j));
    }
    std::cout << out.dump(2) << '\n';
  } else if (!found.empty()) {
    Table t({{"QUEUE", false}, {"ID", false}, {"STATE", false}, {"ATTEMPTS", true}, {"ERROR", false}});
    for (const FoundJob& f : found) {
      t.add(
          {f.queue, f.job.id, f.job.state, std::to_string(f.job.attempts), text_cell(f.job.error, kErrorColumnBytes)});
    }
    t.print(std::cout);
  }
  if (found.empty()) say("no job " + o.id + " in any known queue (emq stats lists them)");
  return found.empty() ? kExitNotFound : kExitOk;
}

// "scanned N of M pending jobs of queue Q; K found", and how to see more.
std::string scanned_line(const QueueKeys& q, JobState state, const SearchResult& r, const SearchOptions& o) {
  std::string line = "scanned " + std::to_string(r.scanned) + " of " + std::to_string(r.total) + " " +
                     to_string(state) + " jobs of queue " + q.queue + "; " + std::to_string(r.jobs.size()) + " found";
  if (r.limit_reached) {
    line += " (stopped at --limit " + std::to_string(o.limit) + ")";
  } else if (r.scanned < r.total) {
    line += " (--scan " + std::to_string(o.scan) + " reached; --scan N reads more)";
  }
  return line;
}

int run_queue_search(Tool& tool, const SearchOptions& o) {
  if (o.queue.empty()) throw Error(ErrorKind::Invalid, "search", "name a QUEUE to search, or find a job by --id ID");
  QueueKeys q(o.queue);
  check_bounds(o);
  SearchArgs args;
  args.state = state_option(o.state, "search");
  args.id_prefix = o.id_prefix;
  args.payload_contains = o.payload;
  args.error_contains = o.error;
  args.limit = o.limit;
  args.scan = o.scan;
  args.preview_bytes = o.json ? 200 : kPreviewBytes;
  Executor x(tool.options());
  const SearchResult r = search_jobs(x, q, args);
  if (o.json) {
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (const JobSummary& j : r.jobs) jobs.push_back(job_json(args.state, j));
    nlohmann::ordered_json out = {{"queue", q.queue}, {"state", to_string(args.state)},   {"scanned", r.scanned},
                                  {"total", r.total}, {"limit_reached", r.limit_reached}, {"jobs", std::move(jobs)}};
    std::cout << out.dump(2) << '\n';
  } else if (!r.jobs.empty()) {
    print_job_table(args.state, r.jobs);
  }
  // On stderr, like emq jobs' notes: stdout stays the table.
  if (!o.json) say(scanned_line(q, args.state, r, o));
  return r.jobs.empty() ? kExitNotFound : kExitOk;
}

}  // namespace

void add_search(CLI::App& app, Tool& tool) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* sub = app.add_subcommand(
      "search", "find jobs: one by --id across queues, or those of a queue whose payload or error holds a text");
  sub->add_option("queue", o->queue, "the queue to search (not with --id)")->type_name("QUEUE");
  sub->add_option("--id", o->id, "the exact job id, looked for in every known queue")->type_name("ID");
  sub->add_option("--state", o->state, "pending (default), active, delayed, dead or waiting")->type_name("STATE");
  sub->add_option("--id-prefix", o->id_prefix, "ids that start with P")->type_name("P");
  sub->add_option("--payload", o->payload, "payloads that contain TEXT (bytes, case-sensitive)")->type_name("TEXT");
  sub->add_option("--error", o->error, "errors that contain TEXT (bytes, case-sensitive)")->type_name("TEXT");
  add_number_option(sub, "--limit", o->limit, "stop at N matches (default 50)")->type_name("N");
  add_number_option(sub, "--scan", o->scan, "read at most N jobs of the state's set (default 10000)")->type_name("N");
  sub->add_flag("--json", o->json, "print one JSON object: scanned, total and the jobs found");
  sub->footer(
      "Every text given must match. The set is read in emq jobs' order, 500 ids and rows per round trip,\n"
      "never a scan of the keyspace; the line on stderr says how many it read of how many.\n"
      "Exit 0 when something was found, 1 when nothing was.");
  sub->callback([&tool, o] {
    tool.run = [&tool, o] { return o->id.empty() ? run_queue_search(tool, *o) : run_id_search(tool, *o); };
  });
}

}  // namespace echomq::cli
