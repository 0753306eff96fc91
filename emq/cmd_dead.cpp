// emq dead list QUEUE [--limit N] [--json]
// emq dead retry QUEUE [ID...] [--limit N] | --match TEXT [--scan N] [--yes]
// emq dead delete QUEUE ID... | --all [--yes]
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/jobs.h"
#include "echomq/transitions.h"
#include "bulk_match.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr std::int64_t kDefaultListLimit = 100;
constexpr std::size_t kErrorColumnBytes = 100;

struct DeadArgs {
  std::string queue;
  std::vector<std::string> ids;
  std::int64_t limit = 0;
  CLI::Option* limit_given = nullptr;
  bool json = false;
  bool all = false;
  bool yes = false;
  MatchOptions match;  // retry --match
};

void check_limit(const DeadArgs& a) {
  if (a.limit_given != nullptr && a.limit_given->count() > 0 && a.limit <= 0) {
    throw Error(ErrorKind::Invalid, "dead", "--limit " + std::to_string(a.limit) + " must be a number > 0");
  }
}

void check_ids(const DeadArgs& a) {
  for (const std::string& id : a.ids) check_wire_gate(id);
}

int run_list(Tool& tool, const DeadArgs& a) {
  QueueKeys q(a.queue);
  check_limit(a);
  Executor x(tool.options());
  ListArgs args;
  args.state = JobState::Dead;
  args.limit = a.limit_given->count() > 0 ? a.limit : kDefaultListLimit;
  args.order = ListOrder::Ascending;  // this command's contract: oldest death first
  args.preview_bytes = 0;
  const JobPage page = list_jobs(x, q, args);
  if (a.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const JobSummary& j : page.jobs) {
      nlohmann::ordered_json o = {{"id", j.id},
                                  {"died_ms", j.score},
                                  {"died_at", iso_time(j.score)},
                                  {"attempts", j.attempts},
                                  {"failures", j.failures}};
      put_bytes_or_null(o, "error", j.error);
      out.push_back(std::move(o));
    }
    std::cout << out.dump(2) << '\n';
  } else if (page.jobs.empty()) {
    say("no dead jobs in queue " + q.queue);
  } else {
    Table t({{"ID", false}, {"DIED", false}, {"ATTEMPTS", true}, {"FAILURES", true}, {"ERROR", false}});
    for (const JobSummary& j : page.jobs) {
      t.add({j.id, iso_time(j.score), std::to_string(j.attempts), std::to_string(j.failures),
             text_cell(j.error, kErrorColumnBytes)});
    }
    t.print(std::cout);
  }
  // On stderr, so that stdout stays the list alone.
  if (static_cast<std::int64_t>(page.jobs.size()) < page.total) {
    say("showing the " + std::to_string(page.jobs.size()) + " oldest of " + std::to_string(page.total) +
        " dead jobs; --limit N shows more, emq jobs pages through them");
  }
  return kExitOk;
}

int run_retry_ids(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids) {
  std::vector<KeyHolder> holders;
  std::vector<RetryJobResult> r = retry_jobs(x, q, ids, &holders);
  std::int64_t moved = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (r[i] == RetryJobResult::Moved) {
      ++moved;
    } else if (r[i] == RetryJobResult::KeyHeld) {
      say(ids[i] + " stays dead: its unique key is held by " + holders[i].id + " (" + holders[i].state +
          "), and two live jobs never share a key; retry it once that job has finished");
    } else {
      say(ids[i] + " is not in the dead set of queue " + q.queue + "; left as it is");
    }
  }
  std::cout << moved << '\n';
  return moved == static_cast<std::int64_t>(ids.size()) ? kExitOk : kExitNotFound;
}

int run_retry(Tool& tool, const DeadArgs& a) {
  if (!a.match.text.empty()) {
    if (!a.ids.empty() || a.limit_given->count() > 0) {
      throw Error(ErrorKind::Invalid, "dead retry", "give job ids, --limit or --match, one of the three");
    }
    MatchOptions m = a.match;
    m.queue = a.queue;
    m.yes = a.yes;
    return run_retry_match(tool, m);
  }
  QueueKeys q(a.queue);
  if (a.match.in != MatchOptions().in) throw Error(ErrorKind::Invalid, "dead retry", "--in goes with --match");
  check_limit(a);
  check_ids(a);
  if (!a.ids.empty() && a.limit_given->count() > 0) {
    throw Error(ErrorKind::Invalid, "dead retry", "give job ids or --limit, not both");
  }
  Executor x(tool.options());
  if (!a.ids.empty()) return run_retry_ids(x, q, a.ids);
  // Without --limit: every job dead now, and no more, so jobs that die
  // again while this runs cannot keep it going.
  const RetryDeadResult r = retry_all_dead(x, q, a.limit_given->count() > 0 ? a.limit : 0);
  std::cout << r.moved << '\n';
  if (r.skipped > 0) {
    say(std::to_string(r.skipped) + " dead jobs stay dead: another live job holds their unique key (emq jobs " +
        q.queue + " --unique KEY names it); retry them once it has finished");
  }
  return kExitOk;
}

int run_delete(Tool& tool, const DeadArgs& a) {
  QueueKeys q(a.queue);
  check_ids(a);
  if (a.all == !a.ids.empty()) {
    throw Error(ErrorKind::Invalid, "dead delete", "give job ids or --all (every dead job), one of the two");
  }
  Executor x(tool.options());
  if (a.all) return purge_confirmed(x, q, JobState::Dead, a.yes);
  std::vector<bool> deleted = delete_dead_jobs(x, q, a.ids);
  std::int64_t n = 0;
  for (std::size_t i = 0; i < a.ids.size(); ++i) {
    if (deleted[i]) {
      ++n;
    } else {
      say(a.ids[i] + " is not in the dead set of queue " + q.queue +
          "; left as it is (emq cancel deletes a job "
          "in any state but active)");
    }
  }
  std::cout << n << '\n';
  return n == static_cast<std::int64_t>(a.ids.size()) ? kExitOk : kExitNotFound;
}

}  // namespace

void add_dead(CLI::App& app, Tool& tool) {
  CLI::App* dead = app.add_subcommand("dead", "the dead set: list it, retry or delete its jobs");

  auto l = std::make_shared<DeadArgs>();
  CLI::App* list = dead->add_subcommand("list", "dead jobs, oldest death first: id, time of death, error");
  list->add_option("queue", l->queue, "the queue")->required()->type_name("QUEUE");
  l->limit_given = add_number_option(list, "--limit", l->limit, "show at most N (default 100)")->type_name("N");
  list->add_flag("--json", l->json, "print a JSON array, one object per job");
  list->callback([&tool, l] { tool.run = [&tool, l] { return run_list(tool, *l); }; });

  auto r = std::make_shared<DeadArgs>();
  CLI::App* retry = dead->add_subcommand(
      "retry", "move dead jobs back to pending, attempts reset: the ones named, or the oldest; prints the count");
  retry->add_option("queue", r->queue, "the queue")->required()->type_name("QUEUE");
  retry->add_option("ids", r->ids, "the dead jobs to retry (default: all, or --limit N)")->type_name("ID...");
  r->limit_given =
      add_number_option(retry, "--limit", r->limit, "move at most N, oldest death first (default all)")->type_name("N");
  retry->add_option("--match", r->match.text, "every dead job whose payload or error (--in) holds TEXT (asks first)")
      ->type_name("TEXT");
  add_match_in_option(retry, r->match);
  add_number_option(retry, "--scan", r->match.scan, "with --match: read at most N dead jobs (default 10000)")
      ->type_name("N");
  retry->add_flag("--yes,-y", r->yes, "with --match: do not ask (required when stdin is not a terminal)");
  retry->footer(
      "Exit 0 when every job named was retried, 1 when one was not in the dead set (it is left alone).\n"
      "--match retries 100 per round trip; a job no longer dead by then is left alone and counted.");
  retry->callback([&tool, r] { tool.run = [&tool, r] { return run_retry(tool, *r); }; });

  auto d = std::make_shared<DeadArgs>();
  CLI::App* del = dead->add_subcommand("delete", "delete dead jobs with their rows: the ones named, or --all");
  del->add_option("queue", d->queue, "the queue")->required()->type_name("QUEUE");
  del->add_option("ids", d->ids, "the dead jobs to delete")->type_name("ID...");
  del->add_flag("--all", d->all, "every dead job of the queue");
  del->add_flag("--yes,-y", d->yes, "do not ask before --all (required when stdin is not a terminal)");
  del->footer(
      "Prints the count deleted. Exit 0 when every job named was deleted, 1 when one was not in the dead\n"
      "set (it is left alone) or the question was answered no.");
  del->callback([&tool, d] { tool.run = [&tool, d] { return run_delete(tool, *d); }; });
}

}  // namespace echomq::cli
