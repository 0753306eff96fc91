#include "duties/lease_renewer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "echomq/job_id.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds period_of(const QueueConfig& q) { return milliseconds(std::max<std::int64_t>(q.lease_ms / 3, 1)); }
}  // namespace

LeaseRenewer::LeaseRenewer(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
                           ReconnectPolicy reconnect)
    : Periodic("lease renewal"), executor_(server, std::move(reconnect), &metrics), metrics_(metrics) {
  for (ClaimLoop* l : loops) queues_.push_back({l, Clock::now() + period_of(l->queue())});
}

LeaseRenewer::~LeaseRenewer() {
  request_stop();
  join();
}

milliseconds LeaseRenewer::tick() {
  const Clock::time_point now = Clock::now();
  std::vector<Due*> due;
  std::vector<std::vector<Lease>> leases;
  std::vector<ScriptCall> calls;
  for (Due& d : queues_) {
    if (d.next > now) continue;
    d.next = now + period_of(d.loop->queue());
    std::vector<Lease> held = d.loop->leased_jobs().leases();
    // An id past no script's gate cannot be extended: left to the reaper,
    // rather than failing every queue's renewal with it.
    held.erase(std::remove_if(held.begin(), held.end(), [](const Lease& l) { return !passes_wire_gate(l.id); }),
               held.end());
    if (held.empty()) continue;
    calls.push_back(extend_call(d.loop->keys(), d.loop->queue().lease_ms, held));
    leases.push_back(std::move(held));
    due.push_back(&d);
  }

  if (!calls.empty()) {
    // On failure Periodic logs and retries in a second: sooner than the
    // next period, which matters when the server was only briefly away.
    std::vector<Reply> replies = executor_.eval_batch(calls);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      ClaimLoop& loop = *due[i]->loop;
      std::vector<bool> kept = decode_extend(replies[i], leases[i].size());
      for (std::size_t k = 0; k < kept.size(); ++k) {
        if (kept[k]) continue;
        const std::string& id = leases[i][k].id;
        if (loop.leased_jobs().stop(leases[i][k], StopReason::LeaseLost)) {
          metrics_.queue(loop.queue().name).lease_lost->Increment();
          spdlog::warn("queue={} job={} lease lost (reaped or taken over): stopping its handler", loop.queue().name,
                       id);
        }
      }
    }
  }

  Clock::time_point next = Clock::now() + milliseconds(1000);
  for (const Due& d : queues_) next = std::min(next, d.next);
  return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(next - Clock::now()));
}

}  // namespace echomq::daemon
