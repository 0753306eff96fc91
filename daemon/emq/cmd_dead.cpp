// emq dead list QUEUE [--limit N] [--json]
// emq dead retry QUEUE [--limit N]
#include <algorithm>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emq/bytes_text.h"
#include "emq/output.h"
#include "emq/tool.h"

namespace echomq::cli {

namespace {

constexpr std::int64_t kDefaultListLimit = 100;
// retry_dead moves this many per call: one script call blocks the server
// while it runs, so a large dead set is moved in slices.
constexpr std::int64_t kRetrySlice = 1000;
constexpr std::size_t kErrorColumnBytes = 100;

struct DeadArgs {
  std::string queue;
  std::int64_t limit = 0;
  CLI::Option* limit_given = nullptr;
  bool json = false;
};

struct DeadJob {
  std::string id;
  std::int64_t died_ms = 0;
  std::optional<std::string> error;
  std::int64_t attempts = 0;
  std::int64_t failures = 0;
};

void check_limit(const DeadArgs& a) {
  if (a.limit_given->count() > 0 && a.limit <= 0) {
    throw Error(ErrorKind::Invalid, "dead", "--limit " + std::to_string(a.limit) + " must be a number > 0");
  }
}

std::int64_t int_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  return r.type == Reply::Type::String ? std::strtoll(r.str.c_str(), nullptr, 10) : 0;
}

// The dead ids with what their rows say, in one round trip after the list:
// HMGET reads only the small fields, never the payloads.
std::vector<DeadJob> read_dead(Executor& x, const QueueKeys& q, std::int64_t limit, std::int64_t& total) {
  std::vector<DeadJob> jobs;
  std::vector<Command> reads = {{"ZCARD", q.dead}};
  std::vector<std::size_t> read_of;  // the read of jobs[i]'s row; 0: none
  for (auto& [id, died] : list_dead(x, q, limit)) {
    // An id that fails even the wire's gate has no row a speaker could
    // have written: it is listed as it is, without one.
    read_of.push_back(passes_wire_gate(id) ? reads.size() : 0);
    if (read_of.back() != 0) reads.push_back({"HMGET", q.row(id), "error", "attempts", "failures"});
    jobs.push_back({id, died, std::nullopt, 0, 0});
  }
  std::vector<Reply> r = x.pipeline(reads);
  if (r[0].is_error()) throw error_from_reply("dead list", r[0].str);
  total = int_of(r[0]);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    // A row that is not a hash (another peer's doing) shows as no row.
    if (read_of[i] == 0 || r[read_of[i]].is_error()) continue;
    const std::vector<Reply>& f = r[read_of[i]].elements;
    if (f.size() != 3) continue;
    if (f[0].type == Reply::Type::String) jobs[i].error = f[0].str;
    jobs[i].attempts = int_of(f[1]);
    jobs[i].failures = int_of(f[2]);
  }
  return jobs;
}

// An error text fit for one table cell: its first line, cut short.
std::string error_cell(const std::optional<std::string>& error) {
  if (!error || error->empty()) return "-";
  if (!is_printable_text(*error)) return "(not text, " + std::to_string(error->size()) + " bytes)";
  std::string_view line = std::string_view(*error).substr(0, error->find_first_of("\r\n"));
  std::string cell(utf8_prefix(line, kErrorColumnBytes));
  std::replace(cell.begin(), cell.end(), '\t', ' ');
  if (cell.size() < error->size()) cell += " ...";
  return cell;
}

int run_list(Tool& tool, const DeadArgs& a) {
  QueueKeys q(a.queue);
  check_limit(a);
  const std::int64_t limit = a.limit_given->count() > 0 ? a.limit : kDefaultListLimit;
  Executor x(tool.options());
  std::int64_t total = 0;
  std::vector<DeadJob> jobs = read_dead(x, q, limit, total);
  if (a.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const DeadJob& j : jobs) {
      nlohmann::ordered_json o = {{"id", j.id},          {"died_ms", j.died_ms},   {"died_at", iso_time(j.died_ms)},
                          {"attempts", j.attempts}, {"failures", j.failures}};
      if (j.error) {
        put_bytes(o, "error", *j.error);
      } else {
        o["error"] = nullptr;
      }
      out.push_back(std::move(o));
    }
    std::cout << out.dump(2) << '\n';
  } else if (jobs.empty()) {
    say("no dead jobs in queue " + q.queue);
  } else {
    Table t({{"ID", false}, {"DIED", false}, {"ATTEMPTS", true}, {"FAILURES", true}, {"ERROR", false}});
    for (const DeadJob& j : jobs) {
      t.add({j.id, iso_time(j.died_ms), std::to_string(j.attempts), std::to_string(j.failures), error_cell(j.error)});
    }
    t.print(std::cout);
  }
  // On stderr, so that stdout stays the list alone.
  if (static_cast<std::int64_t>(jobs.size()) < total) {
    say("showing the " + std::to_string(jobs.size()) + " oldest of " + std::to_string(total) +
        " dead jobs; --limit N shows more");
  }
  return kExitOk;
}

int run_retry(Tool& tool, const DeadArgs& a) {
  QueueKeys q(a.queue);
  check_limit(a);
  Executor x(tool.options());
  // Without --limit: every job dead now, and no more, so jobs that die
  // again while this runs cannot keep it going.
  std::int64_t left = a.limit_given->count() > 0 ? a.limit : stats(x, q).dead;
  std::int64_t moved = 0;
  while (left > 0) {
    const std::int64_t slice = std::min(left, kRetrySlice);
    const std::int64_t n = retry_dead(x, q, slice);
    moved += n;
    left -= slice;
    if (n == 0 && stats(x, q).dead == 0) break;
  }
  std::cout << moved << '\n';
  return kExitOk;
}

}  // namespace

void add_dead(CLI::App& app, Tool& tool) {
  CLI::App* dead = app.add_subcommand("dead", "the dead set: list it, or retry its jobs");

  auto l = std::make_shared<DeadArgs>();
  CLI::App* list = dead->add_subcommand("list", "dead jobs, oldest death first: id, time of death, error");
  list->add_option("queue", l->queue, "the queue")->required()->type_name("QUEUE");
  l->limit_given = list->add_option("--limit", l->limit, "show at most N (default 100)")->type_name("N");
  list->add_flag("--json", l->json, "print a JSON array, one object per job");
  list->callback([&tool, l] { tool.run = [&tool, l] { return run_list(tool, *l); }; });

  auto r = std::make_shared<DeadArgs>();
  CLI::App* retry = dead->add_subcommand("retry", "move dead jobs back to pending, attempts reset; prints the count");
  retry->add_option("queue", r->queue, "the queue")->required()->type_name("QUEUE");
  r->limit_given = retry->add_option("--limit", r->limit, "move at most N, oldest death first (default all)")
                       ->type_name("N");
  retry->callback([&tool, r] { tool.run = [&tool, r] { return run_retry(tool, *r); }; });
}

}  // namespace echomq::cli
