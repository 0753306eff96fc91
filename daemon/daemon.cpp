#include "daemon.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "echomq/keyspace.h"
#include "echomq/stats.h"
#include "echomq/tls.h"
#include "meta_publisher.h"
#include "handlers/handler_factory.h"
#include "signals.h"

namespace echomq::daemon {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long the final settle may wait for an unreachable server after the
// drain; past it, unsettled leases expire and the jobs run again elsewhere.
constexpr milliseconds kFlushTimeout{5000};
constexpr milliseconds kStatusEvery{5000};
// How long the spans of the last jobs may take to leave at shutdown; a
// collector that hangs costs the stop no more than this.
constexpr milliseconds kSpanFlush{2000};

std::vector<std::string> queue_names(const Config& c) {
  std::vector<std::string> names;
  for (const QueueConfig& q : c.queues) names.push_back(q.name);
  return names;
}

// Which executor runs the transitions, and why, for the start-up line.
std::string executor_note(const Executor& x) {
  if (x.native()) return "native (the emq module runs the core transitions)";
  if (x.options().executor == ExecutorChoice::Scripted) return "scripted (valkey.executor: scripted)";
  return "scripted (the server has no emq module; lua/ scripts by SHA)";
}
}  // namespace

Daemon::Daemon(Config config) : config_(std::move(config)) { reconnect_.group = std::make_shared<ReconnectGroup>(); }

Daemon::~Daemon() { stop_parts(); }

ConnectionOptions Daemon::server_options() const {
  ConnectionOptions o = embedded_ ? embedded_->options() : parse_url(config_.valkey.url);
  if (!config_.valkey.username.empty()) o.username = config_.valkey.username;
  if (!config_.valkey.password.empty()) o.password = config_.valkey.password;
  o.connect_timeout = milliseconds(config_.valkey.connect_timeout_ms);
  o.command_timeout = milliseconds(config_.valkey.command_timeout_ms);
  o.client_name = "emqd";
  if (o.tls.enabled) {
    o.tls = config_.valkey.tls;
    o.tls.enabled = true;
    o.tls.settings = {"valkey.tls.ca_file", "valkey.tls.cert_file", "valkey.tls.key_file", "valkey.tls.server_name"};
  }
  o.executor = config_.valkey.executor;
  o.events = events_;
  return o;
}

// What start-up waits on, in words an operator can act on: a refused login
// names the key that holds the password; anything else is the server's
// error as it is.
std::string Daemon::waiting_reason(const Error& e, const ConnectionOptions& server) const {
  const std::string what = e.what();
  const bool login =
      e.op() == "auth" || what.find("NOAUTH") != std::string::npos || what.find("WRONGPASS") != std::string::npos;
  if (!login) return "waiting for the server at " + server.redacted() + ": " + what;
  std::string key = "valkey.password_env or valkey.password_file (and valkey.username)";
  if (!config_.valkey.password_env.empty()) {
    key = "valkey.password_env (the variable " + config_.valkey.password_env + ")";
  } else if (!config_.valkey.password_file.empty()) {
    key = "valkey.password_file (" + config_.valkey.password_file + ")";
  } else if (!server.password.empty()) {
    key = "the password in valkey.url";
  }
  return "the server refuses the login: fix " + key + "; retrying (" + what + ")";
}

// Waits for the server (a daemon may start before it), then checks what
// must hold before any job is claimed. A transient error anywhere in it (a
// timeout, a server still loading or read-only) is waited out as a connect
// is; only a check that fails for good ends start-up. Returns false when
// stopped meanwhile.
bool Daemon::connect_and_check(Executor& x) {
  while (true) {
    try {
      x.ensure_connected();
      check_server(x);
      return true;
    } catch (const Error& e) {
      // A wrong wire, or native asked of a server without the module, will
      // not mend while emqd waits: stop and say so.
      if (e.kind() == ErrorKind::Wire || e.kind() == ErrorKind::Invalid) throw;
      // Connected, and refused for good: no retry mends it.
      if (x.connected() && !e.transient()) throw;
      const std::string why = waiting_reason(e, x.options());
      spdlog::warn("{}", why);
      if (endpoint_) endpoint_->starting(why);
    }
    // An ignored signal (SIGHUP, SIGUSR1/2) ends a wait early: wait out the rest.
    const auto retry_at = Clock::now() + std::max(x.retry_after(), milliseconds(100));
    for (auto now = Clock::now(); now < retry_at; now = Clock::now()) {
      if (wait_stop_signal(std::chrono::duration_cast<milliseconds>(retry_at - now) + milliseconds(1))) return false;
    }
  }
}

void Daemon::check_server(Executor& x) {
  Reply policy = x.command({"CONFIG", "GET", "maxmemory-policy"});
  // An error a wait may mend (LOADING, BUSY) is retried by the caller.
  if (policy.is_error()) {
    Error refused = error_from_reply("config get", policy.str);
    if (refused.transient()) throw refused;
  }
  std::string msg;
  if (policy.type != Reply::Type::Array || policy.elements.size() != 2) {
    // CONFIG is often renamed away on managed servers: say the policy went
    // unchecked rather than pass over it in silence.
    msg = "cannot read the server's maxmemory-policy (CONFIG GET answered " +
          (policy.is_error() ? policy.str : std::string("no value")) +
          "): if it evicts, it may lose job rows and leases. Make sure it is noeviction";
  } else if (policy.elements[1].str != "noeviction") {
    msg = "the server's maxmemory-policy is '" + policy.elements[1].str +
          "': under memory pressure it may evict job rows and leases, losing jobs. Set "
          "maxmemory-policy noeviction on the server";
  }
  if (!msg.empty()) {
    if (config_.valkey.require_noeviction) throw Error(ErrorKind::Reply, "startup", msg);
    spdlog::warn("{}", msg);
  }

  try {
    register_queues(x, queue_names(config_));
  } catch (const Error& e) {
    if (e.transient()) throw;
    // Another writer's {emq}:queues of the wrong type: the queues work
    // without it; only emq's default list misses them.
    spdlog::warn("cannot register the queues in {}: {}", kQueuesKey, e.what());
  }
  publish_queue_meta(x, config_.queues);
}

void Daemon::start_parts() {
  const ConnectionOptions server = server_options();
  std::vector<std::string> secret_env;
  if (!config_.valkey.password_env.empty()) secret_env.push_back(config_.valkey.password_env);

  for (const QueueConfig& q : config_.queues) {
    prometheus::Counter* restarts = metrics_->queue(q.name).handler_restarts;
    handlers_.push_back(make_handler(q, secret_env, [restarts] { restarts->Increment(); }));
    handlers_.back()->start();
    metrics_->queue(q.name).concurrency->Set(q.concurrency);
  }
  std::vector<ClaimLoop*> loops;
  for (std::size_t i = 0; i < config_.queues.size(); ++i) {
    loops_.push_back(
        std::make_unique<ClaimLoop>(config_.queues[i], server, *handlers_[i], *metrics_, reconnect_, tracing_.get()));
    loops.push_back(loops_.back().get());
  }
  // The renewer starts before the first claim so no lease goes unrenewed.
  renewer_ = std::make_unique<LeaseRenewer>(loops, server, *metrics_, reconnect_);
  renewer_->start();
  progress_ = std::make_unique<ProgressSender>(loops, server, *metrics_, reconnect_);
  progress_->start();
  for (auto& l : loops_) l->start();
  reaper_ = std::make_unique<Reaper>(config_, server, *metrics_, reconnect_);
  reaper_->start();
  outbox_drainer_ = std::make_unique<OutboxDrainer>(config_, server, *metrics_, reconnect_);
  outbox_drainer_->start();
  flow_orphans_ = std::make_unique<FlowOrphans>(config_, server, *metrics_, reconnect_);
  flow_orphans_->start();
  HistoryWriter::Params history;
  history.queues = queue_names(config_);
  history_ = std::make_unique<HistoryWriter>(std::move(history), server, metrics_.get(), reconnect_);
  history_->start();
  if (!config_.schedules.empty()) {
    scheduler_ = std::make_unique<Scheduler>(config_.schedules, server, *metrics_, reconnect_);
    scheduler_->start();
  }
  wakeup_ = std::make_unique<Wakeup>(loops, server, config_.valkey.keyspace_events, reconnect_);
  wakeup_->start();
  endpoint_->watch(loops);
  heartbeat_ =
      std::make_unique<Heartbeat>(config_, server, loops, *metrics_, reconnect_,
                                  Heartbeat::Actions{[this] { quiet(); }, [this] { stop_from_registry(); }}, id_);
  heartbeat_->start();
  spdlog::info("in the fleet as {} ({}), beating every {} s", heartbeat_->id(), kDaemonsKey, config_.daemon.beat_s);
}

void Daemon::quiet() {
  for (auto& l : loops_) l->stop_claiming();
  if (heartbeat_) heartbeat_->set_state(FleetState::Quiet);
  spdlog::info("quiet: no more claims on any queue; {} (SIGTERM or emq daemons stop ends the daemon)", summary());
}

// A daemon already draining is not signalled again: a second SIGTERM would
// stop its running jobs at once.
void Daemon::stop_from_registry() {
  if (heartbeat_->state() == FleetState::Stopping) return;
  heartbeat_->set_state(FleetState::Stopping);
  ::kill(::getpid(), SIGTERM);
}

std::string Daemon::summary() const {
  std::size_t held = 0;
  for (const auto& l : loops_) held += l->leased_count();
  return std::to_string(loops_.size()) + " queues, " + std::to_string(held) + " jobs in flight";
}

// The shutdown order, and why:
// 1. Claim loops stop claiming; they keep settling what finishes.
// 2. The lease renewer keeps running through the drain: a draining job
//    whose lease lapsed would be reaped and run twice.
// 3. After drain_timeout_s (or a second signal) every job still running is
//    stopped and released, so another daemon picks it up at once instead
//    of after its lease expires.
// 4. The loops flush their last settlements, then the renewer, the reaper
//    and the handlers stop, and the embedded server last of all.
void Daemon::drain() {
  for (auto& l : loops_) l->stop_claiming();
  if (heartbeat_) heartbeat_->set_state(FleetState::Stopping);
  if (wakeup_) wakeup_->request_stop();
  notify_.stopping("draining: " + summary());
  spdlog::info("draining: {} (up to {} s)", summary(), config_.shutdown.drain_timeout_s);

  const auto until = Clock::now() + milliseconds(static_cast<std::int64_t>(config_.shutdown.drain_timeout_s * 1000));
  // The drain waits for handlers, not for the server: an outcome that is
  // already known waits only for the final flush (kFlushTimeout), so a
  // frozen server cannot stretch the drain to drain_timeout_s.
  auto running = [&] {
    std::size_t n = 0;
    for (auto& l : loops_) n += l->in_handlers();
    return n;
  };
  while (running() > 0 && Clock::now() < until && !second_signal_) {
    if (wait_stop_signal(milliseconds(20))) {
      second_signal_ = true;
      spdlog::warn("second signal: stopping running jobs now");
    }
  }
  if (const std::size_t n = running(); n > 0) {
    spdlog::info("stopping and releasing {} jobs still running", n);
    for (auto& l : loops_) l->leased_jobs().stop_all(StopReason::Shutdown);
  }
  std::size_t unsettled = 0;
  for (auto& l : loops_) unsettled += l->leased_count() - std::min(l->leased_count(), l->in_handlers());
  if (unsettled > 0) {
    spdlog::info("{} outcomes not yet recorded; waiting up to {} s for the server to take them", unsettled,
                 kFlushTimeout.count() / 1000);
  }
  for (auto& l : loops_) l->request_stop(kFlushTimeout);
  for (auto& l : loops_) l->join();
}

void Daemon::stop_parts() {
  heartbeat_.reset();
  endpoint_.reset();
  if (wakeup_) {
    wakeup_->request_stop();
    wakeup_->join();
  }
  for (auto& l : loops_) {
    l->request_stop(milliseconds(0));
    l->join();
  }
  progress_.reset();  // before the loops it listens to
  renewer_.reset();
  reaper_.reset();
  outbox_drainer_.reset();
  flow_orphans_.reset();
  history_.reset();
  scheduler_.reset();
  wakeup_.reset();
  loops_.clear();
  // Every job has ended: its span waits for the export, or for nothing.
  if (tracing_) tracing_->stop(kSpanFlush);
  for (auto& h : handlers_) h->shutdown();
  handlers_.clear();
  if (embedded_) embedded_->stop();
}

int Daemon::run() {
  if (!config_.valkey.tls.key_file.empty()) {
    if (const std::string exposed = key_file_exposure(config_.valkey.tls.key_file); !exposed.empty()) {
      spdlog::warn("{}", exposed);
    }
  }
  if (config_.valkey.embedded) {
    embedded_ = std::make_unique<EmbeddedValkey>(config_.valkey.embedded_dir);
    embedded_->start();
  }
  metrics_ = std::make_unique<Metrics>(queue_names(config_), EMQ_VERSION);
  id_ = Heartbeat::new_id(config_);
  if (config_.tracing.enabled) {
    tracing_ = std::make_unique<Tracing>(
        config_.tracing, Tracing::Origin{EMQ_VERSION, id_},
        SpanDrops{&metrics_->spans_dropped_queue_full(), &metrics_->spans_dropped_export_failed()});
    spdlog::info("tracing: a span per job, sent to {} as service {}", config_.tracing.url,
                 config_.tracing.service_name);
  } else if (!config_.tracing.disabled_by.empty()) {
    spdlog::info("tracing: off, as {}=true says", config_.tracing.disabled_by);
  }
  // Serving before the server is reached: a daemon that waits for it shows
  // emq_valkey_up 0 and a 503, and a taken port fails before any claim.
  endpoint_ = std::make_unique<MetricsEndpoint>(config_, server_options(), *metrics_, reconnect_);

  Executor control(server_options(), reconnect_, metrics_.get());
  try {
    if (!connect_and_check(control)) {
      stop_parts();
      return 0;
    }
  } catch (const Error& e) {
    spdlog::critical("cannot start: {}", e.what());
    stop_parts();
    return 1;
  }
  spdlog::info("connected to {}; {} queues; executor {}", control.options().redacted(), config_.queues.size(),
               executor_note(control));

  start_parts();
  notify_.ready(summary());
  spdlog::info("ready: {}", summary());

  const milliseconds tick =
      notify_.watchdog_interval() ? std::min(*notify_.watchdog_interval(), kStatusEvery) : kStatusEvery;
  while (true) {
    if (wait_stop_signal(tick)) break;
    if (take_quiet_request()) quiet();
    if (notify_.watchdog_interval()) {
      // No ping while a claim loop is stuck: systemd restarts a daemon that
      // lives but no longer works. A server outage alone still pings.
      const HealthVerdict alive = endpoint_->liveness();
      if (alive.healthy)
        notify_.watchdog();
      else
        spdlog::error("not pinging the systemd watchdog: {}", alive.reason);
    }
    notify_.status(summary());
  }

  drain();
  heartbeat_->farewell();
  stop_parts();
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace echomq::daemon
