// The claim loop of one queue: claims as many jobs as there are free handler
// slots (plus the queue's prefetch), hands them to the slots, and settles
// finished jobs. Settlements and the next claim travel in one pipelined
// round trip; with prefetch, a claim waits for a prefetch's worth of room
// and outcomes wait briefly for company, so that one round trip carries
// several jobs. Two round trips may be on the wire at once, each on a
// connection and thread of its own (a Channel): while the server works
// through one batch, the jobs of the last are handed out and the next
// batch is sent; claim_turn.h builds each round trip and reads it back.
// Idle, it polls with a growing interval up to poll_max_ms, and wakes at
// once when the wakeup subscriber reports new work. A claim cut short by
// the queue's limits holds the next claim back (limit_holdback.h); a queue
// in flows settles and claims as flow_reads.h says; server trouble paces
// the turns as server_trouble.h says. A daemon that traces reads the
// claimed rows' trace contexts behind the claim, in a round trip of their
// own: one HMGET per job, pipelined.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "claim_refusal.h"
#include "claim_turn.h"
#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "flow_reads.h"
#include "job_runner.h"
#include "limit_holdback.h"
#include "metrics.h"
#include "running_jobs.h"
#include "server_trouble.h"
#include "settle.h"

namespace echomq::daemon {

class ClaimLoop {
 public:
  // `reconnect` shares one ReconnectGroup among the daemon's connections;
  // `tracing` is null while tracing is off.
  ClaimLoop(const QueueConfig& queue, const ConnectionOptions& server, Handler& handler, Metrics& metrics,
            ReconnectPolicy reconnect = {}, Tracing* tracing = nullptr);
  ~ClaimLoop();
  ClaimLoop(const ClaimLoop&) = delete;
  ClaimLoop& operator=(const ClaimLoop&) = delete;

  void start();
  // New work may be pending: claim now instead of at the next poll.
  void wake();
  // Stop claiming; keep settling what runs (the drain).
  void stop_claiming();
  std::size_t leased_count() const { return running_.size(); }
  RunningJobs& leased_jobs() { return running_; }
  // Running, or claimed ahead and not started: what the drain waits for.
  // leased_count() less these are outcomes to record.
  std::size_t in_handlers() const { return static_cast<std::size_t>(runner_.busy()); }
  // The same, running and claimed ahead apart (the registry's busy and prefetched).
  JobRunner::Load slot_load() const { return runner_.load(); }
  // Round trips sent and not answered yet: at most one per channel.
  int round_trips_on_wire() const { return on_wire_.load(); }
  // Settle what is left, giving up on the server after `flush_for`, then end.
  void request_stop(std::chrono::milliseconds flush_for);
  void join();

  const QueueConfig& queue() const { return queue_; }
  const QueueKeys& keys() const { return keys_; }
  // When the loop last went round (for /healthz); it turns at least once
  // a second while it lives.
  std::chrono::steady_clock::time_point last_turn() const;
  // Why the loop claims nothing while its handler cannot take jobs, as the
  // handler said at the last claim; "" when it can (for /healthz).
  std::string handler_problem() const;
  // Why claim refuses the queue, as "<what kind>: <why>" (claim_refusal.h:
  // a broken limit or pause end in meta, a key of another type, ...); ""
  // while claims are answered (for /healthz).
  std::string claim_problem() const;
  // A lease of the queue ended, here or in another daemon (the active set
  // lost a member): a loop held back by max_active claims again.
  void lease_ended();
  // The queue's limits in meta changed (the queue sampler reads them each
  // second): a loop held back by the old ones claims again at once, and
  // the claim reads the new ones. A rate lifted or loosened would
  // otherwise wait for the old bucket's next token, up to a day.
  void limits_changed();

 private:
  // A connection and the thread that waits on it: a turn blocks its
  // channel for one round trip, and the other channel may take the next.
  struct Channel {
    explicit Channel(Executor e) : executor(std::move(e)) {}
    Executor executor;
    std::thread thread;
    bool in_turn = false;  // from its turn's decision to its next wait; under mutex_
  };

  void run_channel(Channel& ch);
  bool wait_and_turn(Channel& ch);
  bool may_turn(const Channel& ch) const;
  bool turn_due(std::chrono::steady_clock::time_point now) const;
  bool drained(std::chrono::steady_clock::time_point now) const;
  bool claim_wanted() const;
  bool claim_due(std::chrono::steady_clock::time_point now) const;
  bool gathering(std::chrono::steady_clock::time_point now) const;
  std::chrono::steady_clock::time_point next_deadline(std::chrono::steady_clock::time_point now) const;
  // idle: the loop's last claim came back empty.
  void settle_and_claim(Channel& ch, std::deque<Settlement> batch, int reserved, bool idle);
  ClaimTurn::Results round_trip(Channel& ch, const ClaimTurn& turn);
  void learn(Channel& ch, const ClaimMeta& meta);
  // How the next claim waits after this one; takes mutex_.
  void pace_after_claim(const ClaimTurn::Results& r, std::uint64_t changes_before, int asked);
  // A claim answered (refused: none) or refused: says a change of
  // claim_problem() once, in the log.
  void note_claim_refusal(Channel& ch, const std::optional<Error>& refused);
  // Asks the handler whether a claim may go out; logs and publishes a change.
  bool handler_takes_jobs();
  // Under mutex_: sets aside room for a claim about to go out (0: none
  // wanted after all), so that the other channel does not claim the same
  // room; the claim's jobs, once handed to the runner, take it back with
  // unreserve().
  int reserve_claim();
  void unreserve(int jobs);
  // give_back: release them at once (their children's results could not be read).
  void dispatch(std::vector<ClaimedJob> jobs, std::vector<std::vector<ChildResult>> children = {},
                bool give_back = false, std::vector<TraceContext> contexts = {});
  // The claimed rows' trace contexts; none while tracing is off. A read
  // that fails costs the jobs their parent, never their run.
  std::vector<TraceContext> trace_contexts(Channel& ch, const std::vector<ClaimedJob>& jobs);
  void release_unstarted();  // under mutex_
  void deliver(std::optional<Settlement> s);
  void on_server_trouble(Channel& ch, const Error& e, std::deque<Settlement> unsent);
  void on_server_back(const Channel& ch);

  const QueueConfig& queue_;
  Handler& handler_;
  Tracing* tracing_;
  QueueKeys keys_;
  Metrics& metrics_;
  QueueMetrics& qm_;
  RunningJobs running_;
  Settler settler_;
  JobRunner runner_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Settlement> unsettled_;                         // outcomes the server has not taken yet
  std::chrono::steady_clock::time_point unsettled_since_{};  // when the oldest of them arrived
  bool wake_ = false;
  bool claiming_ = true;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point flush_until_{};
  std::chrono::steady_clock::time_point next_claim_at_{};
  std::chrono::milliseconds idle_delay_{1};
  bool queue_had_more_ = false;  // the last claim got all it asked for
  int claims_on_wire_ = 0;       // jobs asked for by claims not yet handed to the runner
  // Jobs handed to the runner whose outcome has not reached unsettled_
  // (nor gone back unstarted): what the drain waits for. The runner's
  // busy() drops as a slot ends its job, a moment before its delivery
  // takes this lock; a drain that read it could end between the two and
  // leave that outcome unsent.
  int handed_over_ = 0;
  std::string handler_problem_;  // see handler_problem()
  LimitHoldback holdback_;       // under mutex_ but its changes()
  ClaimRefusal refusal_;         // see claim_problem()
  std::atomic<std::int64_t> last_turn_ns_{0};
  std::atomic<int> on_wire_{0};
  FlowReads flows_;
  ServerTrouble trouble_;  // under mutex_
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace echomq::daemon
