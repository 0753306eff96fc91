#include "duties/progress_sender.h"

#include <spdlog/spdlog.h>

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
// After the server refused or failed a round, the wait before the next.
constexpr std::chrono::seconds kAfterTrouble{1};
}  // namespace

ProgressSender::ProgressSender(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
                               ReconnectPolicy reconnect)
    : loops_(std::move(loops)), executor_(server, std::move(reconnect), &metrics) {
  for (ClaimLoop* loop : loops_) loop->leased_jobs().on_progress([this] { wake(); });
}

ProgressSender::~ProgressSender() {
  request_stop();
  join();
  for (ClaimLoop* loop : loops_) loop->leased_jobs().on_progress(nullptr);
}

void ProgressSender::start() {
  thread_ = std::thread([this] { main(); });
}

void ProgressSender::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_one();
}

void ProgressSender::join() {
  if (thread_.joinable()) thread_.join();
}

void ProgressSender::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  cv_.notify_one();
}

void ProgressSender::main() {
  std::optional<Clock::time_point> next;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto ready = [&] { return stopping_ || woken_; };
      if (next) {
        cv_.wait_until(lock, *next, ready);
      } else {
        cv_.wait(lock, ready);
      }
      if (stopping_) return;
      woken_ = false;
    }
    try {
      next = send_due();
    } catch (const Error& e) {
      // The reports stay unsent (send_due put them back): the next round
      // sends the latest of each.
      spdlog::debug("progress reports not sent, retrying: {}", e.what());
      next = Clock::now() + kAfterTrouble;
    }
  }
}

std::optional<Clock::time_point> ProgressSender::send_due() {
  const Clock::time_point now = Clock::now();
  std::optional<Clock::time_point> next;
  std::vector<ScriptCall> calls;
  std::vector<std::pair<ClaimLoop*, ProgressReport>> sent;
  for (ClaimLoop* loop : loops_) {
    for (ProgressReport& r : loop->leased_jobs().take_progress(now, kEvery, &next)) {
      calls.push_back(progress_call(loop->keys(), r.lease, r.value));
      sent.emplace_back(loop, std::move(r));
    }
  }
  if (calls.empty()) return next;
  std::vector<Reply> replies;
  try {
    replies = executor_.eval_batch(calls);
  } catch (const Error&) {
    for (auto& [loop, r] : sent) loop->leased_jobs().unsent_progress(r);
    throw;
  }
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const auto& [loop, r] = sent[i];
    if (replies[i].is_error()) {
      spdlog::warn("queue={} job={} progress not stored: {}", loop->queue().name, r.lease.id, replies[i].str);
    } else if (!decode_progress(replies[i])) {
      spdlog::debug("queue={} job={} progress refused: the lease was lost", loop->queue().name, r.lease.id);
    }
  }
  // What came in while this round was on the wire is due a round later.
  return next ? std::min(*next, now + kEvery) : std::optional<Clock::time_point>(now + kEvery);
}

}  // namespace echomq::daemon
