// emq_bench_groups: what fair share costs claim, and what it buys a small
// tenant. Two measures, each one JSON line:
//
// --cost: enqueues --jobs jobs round robin over --groups groups, resets the
// server's command statistics, claims --measure of them (claims of 16, 4 a
// round trip, as a busy emqd asks) and prints the server's µs per job
// claimed: {"groups":G,"jobs":N,"usec_per_job":U,"command":"evalsha"}.
//
// --wait: a backlog of --backlog jobs in one tenant's group (ungrouped with
// --no-groups: the FIFO a queue without groups gives), then one claimer
// that claims one job a round trip and completes it in the next, and every
// --every claims enqueues one job of a new small tenant (its own group; or
// ungrouped, at the tail). Each small job's wait from its enqueue to the
// claim that hands it out, in claims and in ms, as p50 and p99 over
// --tenants of them: {"claims_p50":..,"claims_p99":..,"ms_p50":..,"ms_p99":..}.
//
// On a server with the emq module the claims are EMQ.CLAIM, else EVALSHA.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command_stats.h"
#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "job_ids.h"

namespace {

using Clock = std::chrono::steady_clock;

void enqueue_all(echomq::Executor& x, const echomq::QueueKeys& q, long long first, long long jobs,
                 const std::vector<std::string>& groups) {
  std::vector<echomq::ScriptCall> calls;
  for (long long i = 0; i < jobs; ++i) {
    echomq::EnqueueOptions o;
    if (!groups.empty()) o.group = groups[static_cast<std::size_t>(i) % groups.size()];
    calls.push_back(echomq::enqueue_call(q, emq_bench::job_id(first + i), "x", o));
    if (calls.size() == 256 || i + 1 == jobs) {
      for (const echomq::Reply& r : x.eval_batch(calls)) {
        if (echomq::decode_enqueue(r) != echomq::EnqueueResult::Enqueued) {
          throw echomq::Error(echomq::ErrorKind::Reply, "groups", "an enqueue of the prefill was refused");
        }
      }
      calls.clear();
    }
  }
}

void cost(echomq::Executor& x, const echomq::QueueKeys& q, long long groups, long long jobs, long long measure) {
  std::vector<std::string> names;
  for (long long g = 0; g < groups; ++g) names.push_back("t" + std::to_string(g));
  enqueue_all(x, q, 0, jobs, names);
  const std::string command = x.native() ? "emq.claim" : "evalsha";
  x.command({"CONFIG", "RESETSTAT"});
  long long claimed = 0;
  while (claimed < measure) {
    std::vector<echomq::ScriptCall> calls(4, echomq::claim_call(q, {3600000, 16, 0}));
    for (echomq::Reply& r : x.eval_batch(calls)) {
      claimed += static_cast<long long>(echomq::decode_claim(std::move(r)).size());
    }
  }
  const auto [ncalls, usec] = emq_bench::command_stats(x, command);
  std::printf(
      "{\"groups\":%lld,\"jobs\":%lld,\"claimed\":%lld,\"calls\":%lld,\"usec_per_job\":%.3f,"
      "\"command\":\"%s\"}\n",
      groups, jobs, claimed, ncalls, static_cast<double>(usec) / static_cast<double>(claimed), command.c_str());
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void wait(echomq::Executor& x, const echomq::QueueKeys& q, long long backlog, long long tenants, long long every,
          bool grouped) {
  enqueue_all(x, q, 0, backlog, grouped ? std::vector<std::string>{"big"} : std::vector<std::string>{});
  struct Sent {
    long long at_claim;
    Clock::time_point at;
  };
  std::map<std::string, Sent> waiting;
  std::vector<double> claims, ms;
  std::vector<echomq::ScriptCall> completes;
  long long n = 0, next_tenant = 0;
  while (static_cast<long long>(claims.size()) < tenants) {
    if (n % every == 0 && next_tenant < tenants) {
      echomq::EnqueueOptions o;
      if (grouped) o.group = "small" + std::to_string(next_tenant);
      const std::string id = emq_bench::job_id(backlog + next_tenant++);
      if (echomq::enqueue(x, q, id, "x", o) != echomq::EnqueueResult::Enqueued) {
        throw echomq::Error(echomq::ErrorKind::Reply, "groups", "a small tenant's enqueue was refused");
      }
      waiting[id] = {n, Clock::now()};
    }
    completes.push_back(echomq::claim_call(q, {3600000, 1, 0}));
    std::vector<echomq::Reply> replies = x.eval_batch(completes);
    completes.clear();
    std::vector<echomq::ClaimedJob> got = echomq::decode_claim(std::move(replies.back()));
    if (got.empty()) throw echomq::Error(echomq::ErrorKind::Reply, "groups", "the queue ran dry before every tenant");
    ++n;
    const echomq::ClaimedJob& j = got.front();
    if (auto w = waiting.find(j.id); w != waiting.end()) {
      claims.push_back(static_cast<double>(n - w->second.at_claim));
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - w->second.at).count());
      waiting.erase(w);
    }
    completes.push_back(echomq::complete_call(q, {j.id, j.lease_epoch}, 0, ""));
  }
  std::printf(
      "{\"grouped\":%s,\"backlog\":%lld,\"tenants\":%lld,\"claims\":%lld,\"claims_p50\":%.0f,"
      "\"claims_p99\":%.0f,\"ms_p50\":%.3f,\"ms_p99\":%.3f}\n",
      grouped ? "true" : "false", backlog, tenants, n, percentile(claims, 50), percentile(claims, 99),
      percentile(ms, 50), percentile(ms, 99));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What fair share between groups costs claim, and what it buys a small tenant."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "groups";
  long long groups = 10, jobs = 40000, measure = 20000, backlog = 100000, tenants = 100, every = 500;
  bool no_groups = false;
  auto* cost_mode = app.add_flag("--cost", "the server's µs per job claimed with --groups groups");
  auto* wait_mode = app.add_flag("--wait", "a small tenant's wait behind a --backlog tenant");
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the queue");
  app.add_option("--groups", groups, "--cost: groups the jobs go to, round robin (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--jobs", jobs, "--cost: jobs enqueued")->check(CLI::PositiveNumber);
  app.add_option("--measure", measure, "--cost: jobs claimed while measured")->check(CLI::PositiveNumber);
  app.add_option("--backlog", backlog, "--wait: the big tenant's jobs")->check(CLI::PositiveNumber);
  app.add_option("--tenants", tenants, "--wait: small tenants, one job each")->check(CLI::PositiveNumber);
  app.add_option("--every", every, "--wait: claims between two small tenants")->check(CLI::PositiveNumber);
  app.add_flag("--no-groups", no_groups, "--wait: every job ungrouped (the FIFO without groups)");
  CLI11_PARSE(app, argc, argv);
  if (cost_mode->count() + wait_mode->count() != 1) {
    std::fprintf(stderr, "emq_bench_groups: give one of --cost and --wait\n");
    return 2;
  }
  if (measure > jobs || (wait_mode->count() && tenants * every > backlog)) {
    std::fprintf(stderr, "emq_bench_groups: --measure must be at most --jobs, --tenants x --every at most --backlog\n");
    return 2;
  }
  try {
    echomq::Executor x(echomq::parse_url(url));
    x.ensure_connected();
    const echomq::QueueKeys q(queue);
    if (cost_mode->count()) cost(x, q, groups, jobs, measure);
    if (wait_mode->count()) wait(x, q, backlog, tenants, every, !no_groups);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emq_bench_groups: %s\n", e.what());
    return 1;
  }
}
