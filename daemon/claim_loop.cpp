#include "claim_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "echomq/job_id.h"
#include "echomq/claim_meta.h"
#include "echomq/events.h"
#include "echomq/parent_results.h"
#include "clock.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kMinIdleDelay{1};
constexpr milliseconds kHeartbeat{1000};
constexpr milliseconds kLookForServerBack{100};
constexpr std::int64_t kPromoteLimit = 100;
// While the handler cannot take jobs, how often the loop asks it again.
constexpr milliseconds kNotReadyRecheck{200};
// On a queue with prefetch, whose slots have jobs waiting, an outcome waits
// up to this long for company (more outcomes, the next claim) so that
// several ride one round trip: the server's work per job is mostly the
// round trip's. Long enough to gather a few outcomes of jobs of a
// millisecond; short beside any job worth a queue.
constexpr milliseconds kOutcomeHold{2};
// Round trips on the wire at once. With one, the server and the daemon
// take turns: the server waits while a batch's jobs are handed out and
// its outcomes gathered, and the daemon waits while the server works. A
// second lets both work at once; a third would only queue behind them on
// the server's one thread.
constexpr int kChannels = 2;
// A lease that ends is heard by every daemon of the queue at once: each
// claims after its own wait of up to this long, so that they do not all
// ask the server for the one free place in the same instant.
constexpr int kLeaseEndJitterMs = 20;
}  // namespace

ClaimLoop::ClaimLoop(const QueueConfig& queue, const ConnectionOptions& server, Handler& handler, Metrics& metrics,
                     ReconnectPolicy reconnect)
    : queue_(queue),
      handler_(handler),
      keys_(queue.name),
      metrics_(metrics),
      qm_(metrics.queue(queue.name)),
      settler_(queue_, keys_),
      runner_(queue_, handler, running_, qm_, [this](std::optional<Settlement> s) { deliver(std::move(s)); }) {
  // Each executor connects at its first call: an idle queue's second
  // channel never opens a connection.
  for (int i = 0; i < kChannels; ++i) {
    channels_.push_back(std::make_unique<Channel>(Executor(server, reconnect, &metrics)));
  }
}

ClaimLoop::~ClaimLoop() {
  request_stop(milliseconds(0));
  join();
}

void ClaimLoop::start() {
  runner_.start();
  last_turn_ns_ = Clock::now().time_since_epoch().count();
  for (auto& ch : channels_) {
    Channel& c = *ch;
    c.thread = std::thread([this, &c] { run_channel(c); });
  }
}

void ClaimLoop::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_ = true;
  }
  cv_.notify_all();
}

void ClaimLoop::stop_claiming() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    claiming_ = false;
  }
  cv_.notify_all();
}

void ClaimLoop::request_stop(milliseconds flush_for) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) flush_until_ = Clock::now() + flush_for;
    claiming_ = false;
    stopping_ = true;
  }
  cv_.notify_all();
}

void ClaimLoop::join() {
  for (auto& ch : channels_) {
    if (ch->thread.joinable()) ch->thread.join();
  }
  runner_.request_stop();
  runner_.join();
}

Clock::time_point ClaimLoop::last_turn() const { return Clock::time_point(Clock::duration(last_turn_ns_.load())); }

// The loop thread is woken only when it has something to do: a turn is
// due, or the first outcome of a batch starts its hold.
void ClaimLoop::deliver(std::optional<Settlement> s) {
  bool wake_loop;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    const bool first = s && outbox_.empty();
    if (first) outbox_since_ = now;
    if (s) outbox_.push_back(std::move(*s));
    wake_loop = first || turn_due(now);
  }
  if (wake_loop) cv_.notify_all();
}

// Waiting out server trouble, unless another connection of the daemon has
// reached the server since: then the wait is over at once.
bool ClaimLoop::backing_off(Clock::time_point now) const {
  return now < backoff_until_ && !(troubled_ != nullptr && troubled_->executor.server_back());
}

// Through server trouble, the channel that met it makes the attempts
// alone: one line and one growing wait per attempt, on one connection's
// backoff, rather than two channels taking turns at failing. Otherwise a
// channel works only while those before it are in their turns: an idle
// queue's polls all go on the first connection, and the second opens only
// when two round trips are wanted at once. Two channels wait on one
// condition variable, so every wake-up is notify_all: the one woken must
// be the one whose turn it is.
bool ClaimLoop::may_turn(const Channel& ch) const {
  if (trouble_count_ > 0) return troubled_ == &ch;
  for (const auto& c : channels_) {
    if (c.get() == &ch) return true;
    if (!c->in_turn) return false;
  }
  return false;
}

bool ClaimLoop::turn_due(Clock::time_point now) const {
  if (backing_off(now)) return false;  // the server is in trouble: wait
  if (stopping_) return !outbox_.empty() || runner_.busy() == 0;
  if (!outbox_.empty() && !holding(now)) return true;
  return claim_due(now);
}

// While the queue has more than a claim asks for, the loop refills the
// jobs claimed ahead in batches of `prefetch`, which keeps round trips, and
// the server's work per job, down while the jobs still waiting keep the
// slots busy. A slot left with nothing to take never waits for the batch,
// and once a claim comes back short (the queue ran dry) any room is filled
// as jobs trickle in. While a claim is on the wire, its jobs are the
// starving slots' food: a second claim goes out only for a queue known to
// have more, and only for a prefetch's worth of room besides.
bool ClaimLoop::claim_wanted() const {
  const JobRunner::Capacity c = runner_.capacity();
  const int room = c.room - claims_on_wire_;
  if (room <= 0) return false;
  if (claims_on_wire_ > 0) return queue_had_more_ && room >= queue_.prefetch;
  return !queue_had_more_ || room >= queue_.prefetch || c.starving;
}

bool ClaimLoop::claim_due(Clock::time_point now) const {
  return claiming_ && (wake_ || now >= next_claim_at_) && !held(now) && claim_wanted();
}

bool ClaimLoop::held(Clock::time_point now) const { return held_by_ != HeldBy::None && now < held_until_; }

// Outcomes are held only while claiming and the slots have work waiting
// (prefetch): then holding them keeps no slot and no claim waiting.
bool ClaimLoop::holding(Clock::time_point now) const {
  return claiming_ && queue_.prefetch > 0 && now < outbox_since_ + kOutcomeHold;
}

Clock::time_point ClaimLoop::next_deadline(Clock::time_point now) const {
  Clock::time_point deadline = now + kHeartbeat;
  // Looking every 100 ms whether another connection found the server back
  // costs no call to it.
  if (backing_off(now)) return std::min({deadline, backoff_until_, now + kLookForServerBack});
  if (!outbox_.empty()) deadline = std::min(deadline, outbox_since_ + kOutcomeHold);
  if (claiming_ && claim_wanted()) deadline = std::min(deadline, held(now) ? held_until_ : next_claim_at_);
  return deadline;
}

// No value read from the server may end the daemon: a turn that throws
// what no branch below expected is logged and retried after a backoff, as a
// server error is, instead of leaving the thread (std::terminate).
void ClaimLoop::run_channel(Channel& ch) {
  while (true) {
    try {
      if (!wait_and_turn(ch)) return;
    } catch (const std::exception& e) {
      on_server_trouble(ch, Error(ErrorKind::Protocol, "claim loop", e.what()), {});
    }
  }
}

std::string ClaimLoop::handler_problem() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return handler_problem_;
}

std::string ClaimLoop::limit_problem() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_problem_;
}

void ClaimLoop::lease_ended() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_by_ != HeldBy::MaxActive) return;
    const auto at = Clock::now() + milliseconds(std::uniform_int_distribution<int>(0, kLeaseEndJitterMs)(jitter_));
    held_until_ = std::min(held_until_, at);
  }
  cv_.notify_all();
}

void ClaimLoop::limits_changed() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++limits_changes_;
    held_by_ = HeldBy::None;
    wake_ = true;
  }
  cv_.notify_all();
}

void ClaimLoop::note_limit_problem(const std::string& why) {
  std::string was;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (why == limit_problem_) return;
    was = std::exchange(limit_problem_, why);
  }
  if (why.empty()) {
    spdlog::info("queue={} its limits hold again: claiming resumes", queue_.name);
  } else {
    spdlog::error("queue={} claims nothing until its limits are mended (emq limit {}): {}", queue_.name, queue_.name,
                  why);
  }
}

// A rate without a whole token waits for the next one, whatever else
// happens: nothing could be claimed before it. A claim cut short while
// jobs wait, at max_active, waits for a lease to end (lease_ended) or
// poll_max_ms; a settlement of this daemon's may claim meanwhile.
void ClaimLoop::hold_for_limits(const LimitFields& fields, const Reply& pending, int asked, std::size_t claimed) {
  held_by_ = HeldBy::None;
  const std::optional<QueueLimits> limits = fields.limits();
  const std::optional<std::int64_t> token_in = fields.ms_to_next_token();
  const bool cut_short =
      static_cast<int>(claimed) < asked && pending.type == Reply::Type::Integer && pending.integer > 0;
  const Clock::time_point now = Clock::now();
  if (token_in && *token_in > 0) {
    held_by_ = HeldBy::Rate;
    held_until_ = now + milliseconds(*token_in);
    if (cut_short) qm_.limited_rate->Increment();
  } else if (cut_short && limits && limits->max_active) {
    held_by_ = HeldBy::MaxActive;
    held_until_ = now + milliseconds(queue_.poll_max_ms);
    qm_.limited_max_active->Increment();
  }
}

bool ClaimLoop::handler_takes_jobs() {
  const std::string why = handler_.not_ready();
  std::string was;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!why.empty()) next_claim_at_ = Clock::now() + kNotReadyRecheck;
    if (why == handler_problem_) return why.empty();
    was = std::exchange(handler_problem_, why);
  }
  if (why.empty()) {
    spdlog::info("queue={} the handler is up again: claiming resumes", queue_.name);
  } else if (was.empty()) {
    spdlog::error("queue={} claiming nothing until the handler can start: {}", queue_.name, why);
  }
  qm_.handler_up->Set(why.empty() ? 1 : 0);
  return why.empty();
}

// Under mutex_, in the decision of the turn that claims: the other
// channel, deciding its own turn, sees this claim's room as taken.
int ClaimLoop::reserve_claim() {
  if (!claiming_ || !claim_wanted()) return 0;
  const int free = runner_.capacity().room - claims_on_wire_;
  claims_on_wire_ += free;
  return free;
}

void ClaimLoop::unreserve(int jobs) {
  if (jobs == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  claims_on_wire_ -= jobs;
}

// One wait and one turn; false when the loop is done.
bool ClaimLoop::wait_and_turn(Channel& ch) {
  std::deque<Settlement> batch;
  int reserved = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ch.in_turn = false;
    Clock::time_point now = Clock::now();
    while (true) {
      if (!claiming_) release_unstarted();
      const bool mine = may_turn(ch);
      if (mine && turn_due(now)) break;
      if (stopping_ && now >= flush_until_ && runner_.busy() == 0) break;
      cv_.wait_until(lock, mine ? next_deadline(now) : now + kLookForServerBack);
      now = Clock::now();
      last_turn_ns_ = now.time_since_epoch().count();
    }
    last_turn_ns_ = now.time_since_epoch().count();
    if (stopping_ && runner_.busy() == 0 && (outbox_.empty() || now >= flush_until_)) {
      if (!outbox_.empty()) {
        spdlog::error(
            "queue={} gave up settling {} jobs: the server did not answer; their leases will expire and "
            "they will run again",
            queue_.name, outbox_.size());
        outbox_.clear();  // said once, not once per channel
      }
      return false;
    }
    if (backing_off(now)) return true;
    batch.swap(outbox_);
    // A claim rides along with outcomes when it is wanted at all, even
    // before an idle queue's next poll: the round trip is paid anyway.
    // Not while the rate has no token; at max_active, an outcome settled
    // with the claim may be the lease that makes room.
    const bool claim_now =
        claim_due(now) || (!batch.empty() && claiming_ && claim_wanted() && !(held(now) && held_by_ == HeldBy::Rate));
    wake_ = false;
    if (claim_now) reserved = reserve_claim();
    if (batch.empty() && reserved == 0) return true;
    ch.in_turn = true;
  }
  cv_.notify_all();  // the next channel may work while this one is on the wire
  settle_and_claim(ch, std::move(batch), reserved);
  return true;
}

void ClaimLoop::settle_and_claim(Channel& ch, std::deque<Settlement> batch, int reserved) {
  // However the turn ends, the room set aside is the runner's again once
  // dispatch() has handed it the jobs (or there are none).
  struct Reserved {
    ClaimLoop& loop;
    int jobs;
    ~Reserved() { loop.unreserve(jobs); }
  } reservation{*this, reserved};
  const int free = reserved > 0 && handler_takes_jobs() ? reserved : 0;
  if (batch.empty() && free == 0) return;
  std::vector<ScriptCall> calls;
  calls.reserve(batch.size() + 1);
  const FlowMode mode = flows_ ? FlowMode::Flow : FlowMode::Plain;
  for (auto it = batch.begin(); it != batch.end();) {
    try {
      calls.push_back(settler_.call(*it, mode));
      ++it;
    } catch (const Error& e) {
      // Only an id no script would take (a peer wrote it past the wire's
      // gate) gets here: its lease expires and the reaper decides.
      spdlog::error("queue={} job={} cannot be settled: {}", queue_.name, it->lease.id, e.what());
      running_.remove(it->lease);
      it = batch.erase(it);
    }
  }
  // Read right behind the claim, in its round trip: meta (why it came
  // back short, and the flows flag) and how much is still pending.
  std::vector<Command> reads;
  if (free > 0) {
    calls.push_back(claim_call(keys_, {queue_.lease_ms, free, kPromoteLimit}));
    reads = {claim_meta_read(keys_), {"ZCARD", keys_.pending}};
  }

  const std::uint64_t changes_before = limits_changes_;
  std::vector<Reply> replies;
  try {
    replies = round_trip(ch, calls, reads);
  } catch (const Error& e) {
    on_server_trouble(ch, e, std::move(batch));
    return;
  }

  std::deque<Settlement> keep;
  std::optional<Error> refused = record_outcomes(batch, replies, keep);
  std::vector<ClaimedJob> jobs;
  std::optional<ClaimMeta> meta;
  if (free > 0) meta = decode_claim_meta(replies[calls.size()]);
  // The stream's length the next transitions of the queue pass.
  if (meta && ch.executor.options().events) ch.executor.options().events->learnt(queue_.name, meta->events);
  if (meta && meta->flows == FlowMode::Flow && !flows_.exchange(true)) {
    spdlog::info("queue={} takes part in flows: settling through the flow transitions", queue_.name);
  }
  if (meta && meta->parents) parents_ = true;
  bool claimed_ok = false;
  if (free > 0) {
    try {
      jobs = decode_claim(std::move(replies[calls.size() - 1]));
      claimed_ok = true;
      note_limit_problem("");
    } catch (const Error& e) {
      if (e.transient()) {
        on_server_trouble(ch, e, std::move(keep));
        return;
      }
      // claim's EMQARG for a broken limit names meta, then the field.
      const std::string what = e.what();
      const std::string tag = "EMQARG ";
      const std::size_t at = what.find(tag + keys_.meta + " ");
      if (e.kind() == ErrorKind::Arg && at != std::string::npos) {
        note_limit_problem(what.substr(at + tag.size()));
      } else {
        spdlog::error("queue={} claim refused: {}", queue_.name, what);
      }
    }
  }
  if (refused) {
    on_server_trouble(ch, *refused, std::move(keep));
  } else {
    on_server_back();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free > 0) {
      // Idle: back off towards poll_max_ms; busy: claim again as soon as
      // claim_wanted() says so (a full claim means the queue has more).
      idle_delay_ = jobs.empty() ? std::min(idle_delay_ * 2, milliseconds(queue_.poll_max_ms)) : kMinIdleDelay;
      queue_had_more_ = static_cast<int>(jobs.size()) == free;
      next_claim_at_ = Clock::now() + (jobs.empty() ? idle_delay_ : milliseconds(0));
      if (claimed_ok && changes_before == limits_changes_) {
        hold_for_limits(meta->limits, replies[calls.size() + 1], free, jobs.size());
      }
    }
  }
  std::vector<std::vector<ChildResult>> children;
  bool give_back = false;
  if (parents_ && !jobs.empty()) {
    try {
      children = read_children(ch, jobs);
    } catch (const Error& e) {
      // A parent must not run without its children's results.
      spdlog::warn("queue={} giving back {} claimed jobs: their children's results could not be read: {}", queue_.name,
                   jobs.size(), e.what());
      give_back = true;
    }
  }
  dispatch(std::move(jobs), std::move(children), give_back);
}

std::vector<std::vector<ChildResult>> ClaimLoop::read_children(Channel& ch, const std::vector<ClaimedJob>& jobs) {
  return read_parent_results(ch.executor, keys_, jobs);
}

std::vector<Reply> ClaimLoop::round_trip(Channel& ch, const std::vector<ScriptCall>& calls,
                                         const std::vector<Command>& then) {
  struct Counted {
    std::atomic<int>& n;
    ~Counted() { --n; }
  } counted{on_wire_};
  ++on_wire_;
  return then.empty() ? ch.executor.eval_batch(calls) : ch.executor.eval_batch(calls, then);
}

std::optional<Error> ClaimLoop::record_outcomes(std::deque<Settlement>& batch, const std::vector<Reply>& replies,
                                                std::deque<Settlement>& keep) {
  std::optional<Error> refused;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Settlement& s = batch[i];
    Settled how;
    try {
      how = Settler::decode(s, replies[i]);
    } catch (const Error& e) {
      if (e.transient()) {
        if (!refused) refused = e;
        keep.push_back(std::move(s));
        continue;
      }
      // A refusal that retrying cannot mend: the lease will expire and the
      // reaper will hand the job out again.
      spdlog::error("queue={} job={} could not be settled: {}", queue_.name, s.lease.id, e.what());
      running_.remove(s.lease);
      continue;
    }
    switch (how) {
      case Settled::Completed: qm_.completed->Increment(); break;
      case Settled::Retried: qm_.failed_retry->Increment(); break;
      case Settled::Dead: qm_.failed_dead->Increment(); break;
      case Settled::Released: qm_.released->Increment(); break;
      case Settled::LeaseLost:
        // The renewer may have found it lost first and counted it then.
        if (running_.reason(s.lease) != StopReason::LeaseLost) qm_.lease_lost->Increment();
        break;
    }
    if (how == Settled::LeaseLost) {
      spdlog::warn("queue={} job={} attempt={} lease lost before its outcome counted", queue_.name, s.lease.id,
                   s.attempt);
    } else if (how == Settled::Dead) {
      spdlog::warn("queue={} job={} attempt={} dead: {}", queue_.name, s.lease.id, s.attempt, s.text);
    } else {
      spdlog::debug("queue={} job={} attempt={} {}", queue_.name, s.lease.id, s.attempt, to_string(how));
    }
    running_.remove(s.lease);
  }
  return refused;
}

void ClaimLoop::dispatch(std::vector<ClaimedJob> jobs, std::vector<std::vector<ChildResult>> children, bool give_back) {
  if (jobs.empty()) return;
  const std::int64_t now_ms = epoch_ms();
  std::vector<JobRunner::Assignment> batch;
  batch.reserve(jobs.size());
  for (ClaimedJob& job : jobs) {
    qm_.claimed->Increment();
    if (auto minted = minted_at_ms(job.id)) {
      qm_.job_wait->Observe(std::max<double>(0, static_cast<double>(now_ms - static_cast<std::int64_t>(*minted))) /
                            1e3);
    }
    spdlog::debug("queue={} job={} attempt={} claimed", queue_.name, job.id, job.attempt);
    RunningJob* held = running_.add({job.id, job.lease_epoch}, job.attempt);
    const std::size_t i = batch.size();
    batch.push_back({std::move(job), held, i < children.size() ? std::move(children[i]) : std::vector<ChildResult>{}});
  }
  {
    // A claim that was on the wire when the drain began: nothing starts
    // after the signal, so its jobs go back at once, as unstarted ones do.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!claiming_ || give_back) {
      if (!give_back) spdlog::info("queue={} releasing {} jobs claimed as the drain began", queue_.name, batch.size());
      for (JobRunner::Assignment& a : batch) outbox_.push_back(Settlement::release(a.held->lease, a.job.attempt));
      return;
    }
  }
  runner_.submit(std::move(batch));
}

// At the drain, jobs claimed ahead that no slot has started go back to the
// queue at once instead of waiting behind the running ones.
void ClaimLoop::release_unstarted() {
  std::vector<JobRunner::Assignment> unstarted = runner_.take_waiting();
  if (unstarted.empty()) return;
  spdlog::info("queue={} releasing {} jobs claimed ahead and not started", queue_.name, unstarted.size());
  for (JobRunner::Assignment& a : unstarted) outbox_.push_back(Settlement::release(a.held->lease, a.job.attempt));
}

// Trouble backs off as a lost server does: the executor's reconnect wait,
// or (for a server that answers but refuses writes) a wait that doubles
// on the same reconnect policy's bounds. The log gets one line per attempt
// at a lost server (each with that attempt's error). Trouble that can last
// for hours while the server answers (a refusal such as READONLY, or a
// cluster with a shard down) gets one line when it starts, one per change
// of a refusal, and none per attempt. A last line gives the count when the
// trouble is over.
void ClaimLoop::on_server_trouble(Channel& ch, const Error& e, std::deque<Settlement> unsent) {
  const Executor& executor = ch.executor;
  const Clock::time_point now = Clock::now();
  const std::string what = e.what();
  const bool refusal = e.kind() == ErrorKind::ReadOnly;
  const bool said_once = refusal || executor.cluster_map() != nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const bool starts = trouble_count_++ == 0;
  if (starts) {
    trouble_since_ = now;
    trouble_delay_ = executor.reconnect_policy().initial;
  } else {
    trouble_delay_ = std::min(trouble_delay_ * 2, executor.reconnect_policy().max);
  }
  const milliseconds wait = std::max(executor.retry_after(), trouble_delay_);
  if (starts || !said_once || (refusal && what != trouble_text_)) {
    spdlog::warn(
        "queue={} server trouble, {} outcomes kept for later, retry in {} ms{}: {}", queue_.name, unsent.size(),
        wait.count(),
        said_once ? ", then less often up to every " + std::to_string(executor.reconnect_policy().max.count()) + " ms"
                  : "",
        what);
  }
  trouble_text_ = what;
  troubled_ = &ch;
  // Unknown until a claim answers again: one channel tries, not both.
  queue_had_more_ = false;
  // Older outcomes go first again, ahead of any that arrived meanwhile.
  outbox_.insert(outbox_.begin(), std::make_move_iterator(unsent.begin()), std::make_move_iterator(unsent.end()));
  backoff_until_ = now + wait;
}

void ClaimLoop::on_server_back() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trouble_count_ == 0) return;
  spdlog::info("queue={} the server takes calls again, after {} failed attempts in {:.1f} s", queue_.name,
               trouble_count_, std::chrono::duration<double>(Clock::now() - trouble_since_).count());
  trouble_count_ = 0;
  trouble_text_.clear();
  cv_.notify_all();  // the other channel may take turns again
}

}  // namespace echomq::daemon
