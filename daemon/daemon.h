// emqd itself: owns every part, starts them in order, and stops them in the
// reverse order with the drain in between.
#pragma once

#include <memory>
#include <vector>

#include "claim_loop.h"
#include "config/config_types.h"
#include "echomq/events.h"
#include "duties/heartbeat.h"
#include "embedded_valkey.h"
#include "handlers/handler.h"
#include "duties/progress_sender.h"
#include "duties/lease_renewer.h"
#include "metrics.h"
#include "endpoints/metrics_endpoint.h"
#include "duties/flow_orphans.h"
#include "duties/history_writer.h"
#include "duties/outbox_drainer.h"
#include "duties/reaper.h"
#include "duties/scheduler.h"
#include "systemd_notify.h"
#include "duties/wakeup.h"
#include "tracing/tracing.h"

namespace echomq::daemon {

class Daemon {
 public:
  explicit Daemon(Config config);
  ~Daemon();

  // Runs until SIGTERM or SIGINT, then drains and stops. Returns the exit
  // code: 0 after a clean stop, 1 when the daemon cannot work at all (for
  // example a server that speaks another wire). Call block_signals() first.
  int run();

 private:
  ConnectionOptions server_options() const;
  bool connect_and_check(Executor& x);
  void check_server(Executor& x);
  std::string waiting_reason(const Error& e, const ConnectionOptions& server) const;
  void start_parts();
  // Stops claiming on every queue and stays up (SIGTSTP, or `quiet` from
  // the registry); running jobs finish. Only a stop ends it.
  void quiet();
  // `stop` from the registry: the SIGTERM path, once.
  void stop_from_registry();
  void drain();
  void stop_parts();
  std::string summary() const;

  Config config_;
  SystemdNotify notify_;
  std::unique_ptr<EmbeddedValkey> embedded_;
  std::unique_ptr<Metrics> metrics_;
  std::string id_;                    // in the fleet registry and on its spans
  std::unique_ptr<Tracing> tracing_;  // none while tracing is off
  std::vector<std::unique_ptr<Handler>> handlers_;
  std::vector<std::unique_ptr<ClaimLoop>> loops_;
  std::unique_ptr<LeaseRenewer> renewer_;
  std::unique_ptr<ProgressSender> progress_;
  std::unique_ptr<Reaper> reaper_;
  std::unique_ptr<OutboxDrainer> outbox_drainer_;
  std::unique_ptr<FlowOrphans> flow_orphans_;
  std::unique_ptr<HistoryWriter> history_;
  std::unique_ptr<Scheduler> scheduler_;  // none without schedules:
  std::unique_ptr<Wakeup> wakeup_;
  std::unique_ptr<MetricsEndpoint> endpoint_;  // holds pointers to loops_: stopped before them
  std::unique_ptr<Heartbeat> heartbeat_;       // reads loops_: stopped before them
  bool second_signal_ = false;
  // Every connection of the daemon: when one reaches the server, the
  // others stop waiting out their backoff.
  ReconnectPolicy reconnect_;
  // Which queues keep events, for every connection of the daemon: learnt
  // behind each claim, read by the duties once a second at most.
  std::shared_ptr<EventsBook> events_ = std::make_shared<EventsBook>();
};

}  // namespace echomq::daemon
