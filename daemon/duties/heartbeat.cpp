#include "duties/heartbeat.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace echomq::daemon {

namespace {
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Signals taken at one beat, at most: more than any operator sends at once.
constexpr std::int64_t kMaxSignals = 100;

std::string host_name(const Config& c) {
  if (!c.daemon.name.empty()) return daemon_host(c.daemon.name);
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) return "host";
  return daemon_host(host);
}
}  // namespace

const char* to_string(FleetState state) {
  switch (state) {
    case FleetState::Running: return "running";
    case FleetState::Quiet: return "quiet";
    case FleetState::Stopping: return "stopping";
  }
  return "?";
}

std::string Heartbeat::new_id(const Config& config) { return new_daemon_id(host_name(config), ::getpid()); }

Heartbeat::Heartbeat(const Config& config, const ConnectionOptions& server, std::vector<ClaimLoop*> loops,
                     Metrics& metrics, ReconnectPolicy reconnect, Actions actions, std::string id)
    : Periodic("heartbeat"),
      config_(config),
      loops_(std::move(loops)),
      metrics_(metrics),
      actions_(std::move(actions)),
      executor_(server, std::move(reconnect), &metrics),
      host_(host_name(config)),
      every_(milliseconds(std::max<std::int64_t>(1, std::llround(config.daemon.beat_s * 1000)))) {
  id_ = id.empty() ? new_daemon_id(host_, ::getpid()) : std::move(id);
}

Heartbeat::~Heartbeat() {
  request_stop();
  join();
}

void Heartbeat::set_state(FleetState state) {
  FleetState was = state_.load();
  while (static_cast<int>(was) < static_cast<int>(state) && !state_.compare_exchange_weak(was, state)) {
  }
  if (static_cast<int>(was) < static_cast<int>(state)) {
    metrics_.set_daemon_state(to_string(state_.load()));
    wake();
  }
}

// A beat that fails (the server away, a refusal) is tried again at the
// next one: said when it starts and when it ends, never per beat.
milliseconds Heartbeat::tick() {
  try {
    const std::vector<std::string> signals = beat();
    if (failures_ > 0) spdlog::info("heartbeat: beats again, after {} failed beats", failures_);
    failures_ = 0;
    if (signals.empty()) return every_;
    act(signals);
    return milliseconds(0);  // the ack, at once
  } catch (const std::exception& e) {
    if (failures_++ == 0) {
      spdlog::warn("heartbeat: a beat of {} failed; trying again every {} ms: {}", id_, every_.count(), e.what());
    }
    return every_;
  }
}

std::vector<std::string> Heartbeat::beat() {
  executor_.ensure_connected();
  const std::int64_t now = executor_.server_time_ms();
  if (!started_ms_) started_ms_ = now;
  if (acted_) {
    ack_ = DaemonAck{*acted_, now};
    acted_.reset();
  }
  const std::vector<Reply> r = executor_.pipeline(beat_commands(read_self(now), now, every_.count(), kMaxSignals));
  check_written(r);
  const Reply& live = r[r.size() - 2];
  const Reply& ghosts = r[r.size() - 1];
  if (live.type == Reply::Type::Integer && ghosts.type == Reply::Type::Integer) {
    metrics_.set_daemons(live.integer, ghosts.integer);
  }
  const Reply& taken = r[r.size() - kBeatRepliesAfterExec];
  if (taken.is_error()) throw error_from_reply("heartbeat", taken.str);
  std::vector<std::string> signals;
  for (const Reply& s : taken.elements) signals.push_back(s.str);  // nil: none waiting
  return signals;
}

// MULTI ... EXEC, then the reads after it: EXEC's answer is the beat's. A
// refusal as a command was queued aborts EXEC; one as it ran (a key of
// another type) is in EXEC's answer. The first says why.
void Heartbeat::check_written(const std::vector<Reply>& r) {
  const auto refusal = [](const std::vector<Reply>& replies) {
    return std::find_if(replies.begin(), replies.end(), [](const Reply& each) { return each.is_error(); });
  };
  const Reply& exec = r[r.size() - 1 - kBeatRepliesAfterExec];
  if (exec.type != Reply::Type::Array) {
    auto refused = refusal(r);
    throw error_from_reply("heartbeat", refused != r.end() ? refused->str : "EXEC answered no array");
  }
  if (auto refused = refusal(exec.elements); refused != exec.elements.end()) {
    throw error_from_reply("heartbeat", refused->str);
  }
}

void Heartbeat::act(const std::vector<std::string>& signals) {
  for (const std::string& s : signals) {
    if (s == kSignalQuiet) {
      spdlog::info("heartbeat: asked to quiet through {}: claiming stops, running jobs finish", kDaemonsKey);
      actions_.quiet();
    } else if (s == kSignalStop) {
      spdlog::info("heartbeat: asked to stop through {}: draining as on SIGTERM", kDaemonsKey);
      actions_.stop();
    } else {
      spdlog::warn("heartbeat: ignoring the signal '{}' ({} knows quiet and stop)", s.substr(0, 40), id_);
      continue;
    }
    acted_ = s;
  }
}

DaemonInfo Heartbeat::read_self(std::int64_t now_ms) {
  DaemonInfo b;
  b.id = id_;
  b.host = host_;
  b.pid = ::getpid();
  b.version = EMQ_VERSION;
  b.started_ms = *started_ms_;
  b.state = to_string(state_.load());
  b.executor = executor_.native() ? "native" : "scripted";
  b.ack = ack_;
  const Clock::time_point steady_now = Clock::now();
  for (ClaimLoop* loop : loops_) {
    b.queues.push_back(loop->queue().name);
    b.slots += loop->queue().concurrency;
    const JobRunner::Load load = loop->slot_load();
    b.busy += load.running;
    b.prefetched += load.waiting;
    for (const RunningJobs::Held& h : loop->leased_jobs().held()) {
      // A job claimed ahead shows since its claim, one running since its start.
      const auto since = std::chrono::duration_cast<milliseconds>(steady_now - h.started_at.value_or(h.claimed_at));
      b.jobs.push_back(
          {loop->queue().name, h.lease.id, h.attempt, now_ms - since.count(), h.progress, !h.started_at.has_value()});
    }
  }
  return b;
}

void Heartbeat::farewell() {
  request_stop();
  join();
  try {
    for (const Reply& r : executor_.pipeline(farewell_commands(id_))) {
      if (r.is_error()) throw error_from_reply("heartbeat", r.str);
    }
  } catch (const std::exception& e) {
    spdlog::warn("heartbeat: could not leave {} ({}); it drops out by itself after {} beats", kDaemonsKey, e.what(),
                 kBeatsToLive);
  }
}

}  // namespace echomq::daemon
