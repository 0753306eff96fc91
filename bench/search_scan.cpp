// emq_bench_search: what a search costs beside the reads it cannot avoid.
// Over a pending set prefilled by emq_bench_enqueue (payload "x"), with
// one job enqueued last whose payload holds the word: search_jobs (echomq/search.h) for
// the word with --scan the whole set, against the same ZRANGE + HMGET
// pages read with nothing matched (the ceiling of any bounded search), the
// best of --rounds each. Then one bulk batch: kBulkBatch dead jobs retried
// by retry_found, its server time read from INFO commandstats. Prints
// {"search_s", "reads_s", "scanned", "found", "batch_usec", "batch_jobs"}.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "echomq/bulk_actions.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/search.h"
#include "echomq/transitions.h"
#include "echomq/url.h"
#include "monotonic.h"

namespace {

using namespace echomq;

double seconds_since(long long start_ns) { return static_cast<double>(monotonic_ns() - start_ns) / 1e9; }

// ZRANGE + HMGET of every row, kSearchPage per round trip, nothing matched.
double plain_reads(Executor& x, const QueueKeys& q, std::int64_t total) {
  const long long t0 = monotonic_ns();
  for (std::int64_t from = 0; from < total; from += kSearchPage) {
    Reply ids = x.command({"ZRANGE", q.pending, std::to_string(from), std::to_string(from + kSearchPage - 1)});
    std::vector<Command> rows;
    for (const Reply& id : ids.elements) rows.push_back({"HMGET", q.row_root + id.str, "error", "payload"});
    if (!rows.empty()) x.pipeline(rows);
  }
  return seconds_since(t0);
}

// The server's microseconds over every command since the last RESETSTAT.
long long server_usec(Executor& x) {
  const std::string info = x.command({"INFO", "commandstats"}).str;
  long long sum = 0;
  for (std::size_t at = info.find("usec="); at != std::string::npos; at = info.find("usec=", at + 5)) {
    sum += std::stoll(info.substr(at + 5));
  }
  return sum;
}

// kBulkBatch dead jobs of q2, through the transitions, then one retry_found
// batch: its server time alone.
long long bulk_batch_usec(Executor& x, const QueueKeys& q2) {
  std::vector<ScriptCall> enq;
  for (std::size_t i = 0; i < kBulkBatch; ++i) enq.push_back(enqueue_call(q2, "JOB_bulk" + std::to_string(i), "p"));
  x.eval_batch(enq);
  std::vector<ScriptCall> fails;
  std::vector<std::string> ids;
  for (const ClaimedJob& j : claim(x, q2, {60000, static_cast<std::int64_t>(kBulkBatch), 0})) {
    FailArgs permanent;
    permanent.error = "timeout";
    permanent.permanent = true;
    fails.push_back(fail_call(q2, {j.id, j.lease_epoch}, permanent));
    ids.push_back(j.id);
  }
  x.eval_batch(fails);
  x.command({"CONFIG", "RESETSTAT"});
  const BulkResult r = retry_found(x, q2, ids);
  const long long usec = server_usec(x);
  // INFO's own time is not in its figure until it returns: what is there
  // is the batch's.
  return r.done == static_cast<std::int64_t>(ids.size()) ? usec : -1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A bounded search against the plain reads of the same rows."};
  std::string url = "valkey://127.0.0.1:6379/0";
  std::string queue = "search";
  int rounds = 3;
  app.add_option("--url", url, "the server");
  app.add_option("--queue", queue, "the prefilled queue");
  app.add_option("--rounds", rounds, "best of")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const QueueKeys q(queue);
  Executor x(parse_url(url));
  // The one match, enqueued last: at the end of the set, so the whole set is read.
  enqueue(x, q, mint_job_id(), "{\"order\":4711}");
  const std::int64_t total = x.command({"ZCARD", q.pending}).integer;

  SearchArgs a;
  a.payload_contains = "4711";
  a.scan = total;
  double best_search = 1e9;
  double best_reads = 1e9;
  SearchResult r;
  for (int i = 0; i < rounds; ++i) {
    const long long t0 = monotonic_ns();
    r = search_jobs(x, q, a);
    best_search = std::min(best_search, seconds_since(t0));
    best_reads = std::min(best_reads, plain_reads(x, q, total));
  }
  const long long batch = bulk_batch_usec(x, QueueKeys(queue + ".bulk"));
  std::printf(
      "{\"search_s\":%.6f,\"reads_s\":%.6f,\"scanned\":%lld,\"found\":%zu,\"batch_usec\":%lld,\"batch_jobs\":%zu}\n",
      best_search, best_reads, static_cast<long long>(r.scanned), r.jobs.size(), batch, kBulkBatch);
  return 0;
}
