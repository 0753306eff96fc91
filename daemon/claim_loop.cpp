#include "claim_loop.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "clock.h"
#include "echomq/events.h"
#include "echomq/job_id.h"
#include "logging.h"
#include "record_settled.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kMinIdleDelay{1};
constexpr milliseconds kHeartbeat{1000};
constexpr milliseconds kLookForServerBack{100};
// While the handler cannot take jobs, how often the loop asks it again.
constexpr milliseconds kNotReadyRecheck{200};
// On a queue with prefetch, whose slots have jobs waiting, an outcome waits
// up to this long for company (more outcomes, the next claim) so that
// several ride one round trip: the server's work per job is mostly the
// round trip's. Long enough to gather a few outcomes of jobs of a
// millisecond; short beside any job worth a queue.
constexpr milliseconds kOutcomeGather{2};
// Round trips on the wire at once. With one, the server and the daemon
// take turns: the server waits while a batch's jobs are handed out and
// its outcomes gathered, and the daemon waits while the server works. A
// second lets both work at once; a third would only queue behind them on
// the server's one thread.
constexpr int kChannels = 2;
}  // namespace

ClaimLoop::ClaimLoop(const QueueConfig& queue, const ConnectionOptions& server, Handler& handler, Metrics& metrics,
                     ReconnectPolicy reconnect, Tracing* tracing)
    : queue_(queue),
      handler_(handler),
      tracing_(tracing),
      keys_(queue.name),
      metrics_(metrics),
      qm_(metrics.queue(queue.name)),
      settler_(queue_, keys_),
      runner_(
          queue_, handler, running_, qm_, [this](std::optional<Settlement> s) { deliver(std::move(s)); }, tracing),
      holdback_(queue.poll_max_ms, qm_),
      flows_(queue_.name, keys_),
      trouble_(queue_.name) {
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
// due, or the first outcome of a batch starts its gathering.
void ClaimLoop::deliver(std::optional<Settlement> s) {
  bool wake_loop;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    --handed_over_;
    const bool first = s && unsettled_.empty();
    if (first) unsettled_since_ = now;
    if (s) unsettled_.push_back(std::move(*s));
    wake_loop = first || turn_due(now);
  }
  if (wake_loop) cv_.notify_all();
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
  if (trouble_.under_way()) return trouble_.met_last_by(ch.executor);
  for (const auto& c : channels_) {
    if (c.get() == &ch) return true;
    if (!c->in_turn) return false;
  }
  return false;
}

bool ClaimLoop::turn_due(Clock::time_point now) const {
  if (trouble_.backing_off(now)) return false;  // the server is in trouble: wait
  if (stopping_) return !unsettled_.empty() || handed_over_ == 0;
  if (!unsettled_.empty() && !gathering(now)) return true;
  return claim_due(now);
}

// Stopping with no job handed to the slots whose outcome has not come
// back, and nothing left to settle (or no time left to): the loop is done.
// Each channel asks alone, so one that may not take a turn ends with the
// rest instead of waiting out the flush bound, which is for outcomes the
// server has not taken.
bool ClaimLoop::drained(Clock::time_point now) const {
  return stopping_ && handed_over_ == 0 && (unsettled_.empty() || now >= flush_until_);
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
  return claiming_ && (wake_ || now >= next_claim_at_) && !holdback_.holds_back(now) && claim_wanted();
}

// Outcomes gather only while claiming and the slots have work waiting
// (prefetch): then their wait keeps no slot and no claim waiting.
bool ClaimLoop::gathering(Clock::time_point now) const {
  return claiming_ && queue_.prefetch > 0 && now < unsettled_since_ + kOutcomeGather;
}

Clock::time_point ClaimLoop::next_deadline(Clock::time_point now) const {
  Clock::time_point deadline = now + kHeartbeat;
  // Looking every 100 ms whether another connection found the server back
  // costs no call to it.
  if (trouble_.backing_off(now)) return std::min({deadline, trouble_.backoff_until(), now + kLookForServerBack});
  if (!unsettled_.empty()) deadline = std::min(deadline, unsettled_since_ + kOutcomeGather);
  if (claiming_ && claim_wanted()) {
    deadline = std::min(deadline, holdback_.holds_back(now) ? holdback_.until() : next_claim_at_);
  }
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

std::string ClaimLoop::claim_problem() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refusal_.why.empty() ? std::string() : refusal_.kind + ": " + refusal_.why;
}

void ClaimLoop::lease_ended() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!holdback_.lease_ended()) return;
  }
  cv_.notify_all();
}

void ClaimLoop::limits_changed() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    holdback_.limits_changed();
    wake_ = true;
  }
  cv_.notify_all();
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
  bool idle = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ch.in_turn = false;
    Clock::time_point now = Clock::now();
    while (true) {
      if (!claiming_) release_unstarted();
      const bool mine = may_turn(ch);
      if (mine && turn_due(now)) break;
      if (drained(now)) break;
      cv_.wait_until(lock, mine ? next_deadline(now) : now + kLookForServerBack);
      now = Clock::now();
      last_turn_ns_ = now.time_since_epoch().count();
    }
    last_turn_ns_ = now.time_since_epoch().count();
    if (drained(now)) {
      if (!unsettled_.empty()) {
        spdlog::error(
            "queue={} gave up settling {} jobs: the server did not answer; their leases will expire and "
            "they will run again",
            queue_.name, unsettled_.size());
        unsettled_.clear();  // said once, not once per channel
      }
      return false;
    }
    if (trouble_.backing_off(now)) return true;
    batch.swap(unsettled_);
    // A claim rides along with outcomes when it is wanted at all, even
    // before an idle queue's next poll: the round trip is paid anyway.
    // Not while the rate has no token; at max_active, an outcome settled
    // with the claim may be the lease that makes room.
    const bool claim_now =
        claim_due(now) || (!batch.empty() && claiming_ && claim_wanted() && !holdback_.holds_for_token(now));
    wake_ = false;
    if (claim_now) reserved = reserve_claim();
    if (batch.empty() && reserved == 0) return true;
    idle = idle_delay_ > kMinIdleDelay;
    ch.in_turn = true;
  }
  cv_.notify_all();  // the next channel may work while this one is on the wire
  settle_and_claim(ch, std::move(batch), reserved, idle);
  return true;
}

void ClaimLoop::settle_and_claim(Channel& ch, std::deque<Settlement> batch, int reserved, bool idle) {
  // However the turn ends, the room set aside is the runner's again once
  // dispatch() has handed it the jobs (or there are none).
  struct Reserved {
    ClaimLoop& loop;
    int jobs;
    ~Reserved() { loop.unreserve(jobs); }
  } reservation{*this, reserved};
  const int free = reserved > 0 && handler_takes_jobs() ? reserved : 0;
  if (batch.empty() && free == 0) return;
  // An idle loop also asks when a parked group comes back: nothing else
  // wakes it then (no key changes), and its next poll may be far.
  const ClaimTurn turn(queue_, keys_, settler_, flows_.mode(), batch, free, idle);
  for (const Lease& lease : turn.dropped()) running_.remove(lease);

  const std::uint64_t changes_before = holdback_.changes();
  ClaimTurn::Results r;
  try {
    r = round_trip(ch, turn);
  } catch (const Error& e) {
    on_server_trouble(ch, e, std::move(batch));
    return;
  }

  std::deque<Settlement> keep;
  std::optional<Error> refused = record_settled(queue_.name, batch, r.settled, keep, running_, qm_);
  if (r.claimed) learn(ch, r.meta);
  if (r.refused && r.refused->transient()) {
    on_server_trouble(ch, *r.refused, std::move(keep));
    return;
  }
  if (r.claimed) note_claim_refusal(ch, r.refused);
  if (refused) {
    on_server_trouble(ch, *refused, std::move(keep));
  } else {
    on_server_back(ch);
  }
  if (r.claimed) pace_after_claim(r, changes_before, free);
  FlowReads::Claimed children = flows_.children_of(ch.executor, r.jobs);
  std::vector<TraceContext> contexts = trace_contexts(ch, r.jobs);
  dispatch(std::move(r.jobs), std::move(children.children), children.give_back, std::move(contexts));
}

std::vector<TraceContext> ClaimLoop::trace_contexts(Channel& ch, const std::vector<ClaimedJob>& jobs) {
  if (tracing_ == nullptr || jobs.empty()) return {};
  try {
    return read_trace_contexts(ch.executor, keys_, jobs);
  } catch (const Error& e) {
    spdlog::warn(
        "queue={} {} claimed jobs run in traces of their own: their rows' trace contexts could not be read: {}",
        queue_.name, jobs.size(), e.what());
    return {};
  }
}

// What meta said behind a claim: the stream's length the next transitions
// of the queue pass, and how its jobs settle.
void ClaimLoop::learn(Channel& ch, const ClaimMeta& meta) {
  if (ch.executor.options().events) ch.executor.options().events->learnt(queue_.name, meta.events);
  flows_.learn(meta);
}

// A refusal is said once, however often the claims meet it (each poll),
// and once more when claims are answered again.
void ClaimLoop::note_claim_refusal(Channel& ch, const std::optional<Error>& refused) {
  const ClaimRefusal now = refused ? claim_refusal(ch.executor, keys_, *refused) : ClaimRefusal{};
  ClaimRefusal was;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (now == refusal_) return;
    // The key a refusal named was mended between the claim and the types
    // read after it: said already, it stands until a claim is answered,
    // rather than a second line that names no key.
    if (now.unnamed && !refusal_.why.empty() && refusal_.kind == now.kind) return;
    was = std::exchange(refusal_, now);
  }
  if (!now.why.empty()) {
    spdlog::error("queue={} claims nothing until {}: {}", queue_.name, now.until, now.why);
  } else {
    spdlog::info("queue={} {}: claiming resumes", queue_.name, was.mended);
  }
}

void ClaimLoop::pace_after_claim(const ClaimTurn::Results& r, std::uint64_t changes_before, int asked) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Idle: back off towards poll_max_ms; busy: claim again as soon as
  // claim_wanted() says so (a full claim means the queue has more).
  idle_delay_ = r.jobs.empty() ? std::min(idle_delay_ * 2, milliseconds(queue_.poll_max_ms)) : kMinIdleDelay;
  queue_had_more_ = static_cast<int>(r.jobs.size()) == asked;
  next_claim_at_ = Clock::now() + (r.jobs.empty() ? idle_delay_ : milliseconds(0));
  if (r.jobs.empty() && r.parked_group_in_ms && *r.parked_group_in_ms > 0) {
    // The claim that promotes it runs once the server's clock has passed
    // its time: a millisecond after, whatever the two clocks' ticks. One
    // due already was not promoted by this claim (the queue is paused, or
    // at its limits): the usual backoff, not a claim every millisecond.
    next_claim_at_ = std::min(next_claim_at_, Clock::now() + milliseconds(*r.parked_group_in_ms + 1));
  }
  if (!r.refused) holdback_.after_claim(changes_before, r.meta.limits, r.pending, asked, r.jobs.size());
}

ClaimTurn::Results ClaimLoop::round_trip(Channel& ch, const ClaimTurn& turn) {
  struct Counted {
    std::atomic<int>& n;
    ~Counted() { --n; }
  } counted{on_wire_};
  ++on_wire_;
  return turn.run(ch.executor);
}

void ClaimLoop::dispatch(std::vector<ClaimedJob> jobs, std::vector<std::vector<ChildResult>> children, bool give_back,
                         std::vector<TraceContext> contexts) {
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
    const std::size_t i = batch.size();
    {
      // A job with no context has no trace until its span starts.
      const bool traced = i < contexts.size() && !contexts[i].empty();
      const LogTraceScope log_trace(traced ? trace_id_of(contexts[i].traceparent) : std::string_view());
      spdlog::debug("queue={} job={} attempt={} claimed", queue_.name, job.id, job.attempt);
    }
    RunningJob* held = running_.add({job.id, job.lease_epoch}, job.attempt);
    batch.push_back({std::move(job), held, i < children.size() ? std::move(children[i]) : std::vector<ChildResult>{},
                     i < contexts.size() ? std::move(contexts[i]) : TraceContext{}});
  }
  {
    // A claim that was on the wire when the drain began: nothing starts
    // after the signal, so its jobs go back at once, as unstarted ones do.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!claiming_ || give_back) {
      if (!give_back) spdlog::info("queue={} releasing {} jobs claimed as the drain began", queue_.name, batch.size());
      for (JobRunner::Assignment& a : batch) unsettled_.push_back(Settlement::release(a.held->lease, a.job.attempt));
      return;
    }
    handed_over_ += static_cast<int>(batch.size());
  }
  runner_.submit(std::move(batch));
}

// At the drain, jobs claimed ahead that no slot has started go back to the
// queue at once instead of waiting behind the running ones.
void ClaimLoop::release_unstarted() {
  std::vector<JobRunner::Assignment> unstarted = runner_.take_waiting();
  if (unstarted.empty()) return;
  handed_over_ -= static_cast<int>(unstarted.size());
  spdlog::info("queue={} releasing {} jobs claimed ahead and not started", queue_.name, unstarted.size());
  for (JobRunner::Assignment& a : unstarted) unsettled_.push_back(Settlement::release(a.held->lease, a.job.attempt));
}

// Trouble's log lines and waits: server_trouble.h.
void ClaimLoop::on_server_trouble(Channel& ch, const Error& e, std::deque<Settlement> unsent) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  trouble_.met(ch.executor, e, now, unsent.size());
  // Unknown until a claim answers again: one channel tries, not both.
  queue_had_more_ = false;
  // Older outcomes go first again, ahead of any that arrived meanwhile.
  unsettled_.insert(unsettled_.begin(), std::make_move_iterator(unsent.begin()), std::make_move_iterator(unsent.end()));
}

void ClaimLoop::on_server_back(const Channel& ch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trouble_.over(ch.executor)) cv_.notify_all();  // the other channel may take turns again
}

}  // namespace echomq::daemon
