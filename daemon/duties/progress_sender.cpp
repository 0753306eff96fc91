#include "duties/progress_sender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
// How long it sleeps with nothing due: a new report wakes it sooner.
constexpr std::chrono::hours kIdle{1};
}  // namespace

ProgressSender::ProgressSender(std::vector<ClaimLoop*> loops, const ConnectionOptions& server, Metrics& metrics,
                               ReconnectPolicy reconnect)
    : Periodic("progress"), loops_(std::move(loops)), executor_(server, std::move(reconnect), &metrics) {
  for (ClaimLoop* loop : loops_) loop->leased_jobs().on_progress([this] { wake(); });
}

ProgressSender::~ProgressSender() {
  request_stop();
  join();
  for (ClaimLoop* loop : loops_) loop->leased_jobs().on_progress(nullptr);
}

std::chrono::milliseconds ProgressSender::tick() {
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
  const auto until = [&](Clock::time_point at) {
    return std::chrono::ceil<std::chrono::milliseconds>(std::max(at - Clock::now(), Clock::duration::zero()));
  };
  if (calls.empty()) return next ? until(*next) : std::chrono::milliseconds(kIdle);
  std::vector<Reply> replies;
  try {
    replies = executor_.eval_batch(calls);
  } catch (const Error&) {
    // Unsent again: the next round sends the latest of each.
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
  return until(next ? std::min(*next, now + kEvery) : now + kEvery);
}

}  // namespace echomq::daemon
