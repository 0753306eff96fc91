#include "endpoints/healthz.h"

#include <fmt/format.h>

#include "claim_loop.h"

namespace echomq::daemon {

namespace {
// The loop's own heartbeat is 1 s; the rest is room for a slow machine.
constexpr std::chrono::milliseconds kTurnSlack{5000};

double seconds(Health::Clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

Health::Health(std::vector<Loop> loops, std::function<std::string()> server_trouble)
    : loops_(std::move(loops)), server_trouble_(std::move(server_trouble)) {}

Health::Loop Health::watch(const ClaimLoop& loop, std::chrono::milliseconds server_call_limit) {
  const ClaimLoop* l = &loop;
  return {loop.queue().name, [l] { return l->last_turn(); },
          kTurnSlack + std::chrono::milliseconds(loop.queue().poll_max_ms) + server_call_limit,
          [l] { return l->handler_problem(); }, [l] { return l->claim_problem(); }};
}

HealthVerdict Health::loops(Clock::time_point now) const {
  std::string stalled;
  for (const Loop& l : loops_) {
    const Clock::duration age = now - l.last_turn();
    if (age <= l.allowed) continue;
    stalled += fmt::format("{}queue {} ({:.1f} s, limit {:.1f} s)", stalled.empty() ? "" : ", ", l.queue, seconds(age),
                           seconds(l.allowed));
  }
  if (stalled.empty()) return {true, "ok"};
  return {false, "claim loop not turning: " + stalled};
}

HealthVerdict Health::check(Clock::time_point now) const {
  HealthVerdict v = loops(now);
  auto problem = [&v](const std::function<std::string()>& read, const std::string& what) {
    const std::string why = read ? read() : std::string();
    if (why.empty()) return;
    const std::string line = what + why;
    v = {false, v.healthy ? line : v.reason + "; " + line};
  };
  for (const Loop& l : loops_) {
    problem(l.handler_problem, "queue " + l.queue + " claims nothing, its handler cannot start: ");
    problem(l.claim_problem, "queue " + l.queue + " claims nothing, ");
  }
  const std::string trouble = server_trouble_();
  if (trouble.empty()) return v;
  return {false, trouble + (v.healthy ? std::string() : "; " + v.reason)};
}

}  // namespace echomq::daemon
