// The heartbeat: this daemon's entry in the fleet registry (PROTOCOL.md,
// "Daemons: who runs what"). Every daemon.beat_s, on a connection and a
// thread of its own (a beat never waits on a claim loop, nor one on it), it
// writes who the daemon is, its state, how busy it is and the jobs it runs,
// in one MULTI, and takes the signals sent to it: `quiet` and `stop` are
// handed to the daemon, which acts, and the next beat, at once, carries the
// `ack`. A failed beat is said once and tried again at the next one; a clean
// stop removes the entry (farewell).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "claim_loop.h"
#include "config/config_types.h"
#include "echomq/daemons.h"
#include "echomq/executor.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

// What the registry says of the daemon; only ever forward.
enum class FleetState { Running, Quiet, Stopping };
const char* to_string(FleetState state);

class Heartbeat : public Periodic {
 public:
  // What the daemon does when the registry asks it. Called on the
  // heartbeat's thread; each sets the state it reaches (set_state).
  struct Actions {
    std::function<void()> quiet;  // stop claiming; running jobs finish
    std::function<void()> stop;   // the SIGTERM path
  };

  // `id`: the daemon's id in the registry, "" for a new one (new_id).
  Heartbeat(const Config& config, const ConnectionOptions& server, std::vector<ClaimLoop*> loops, Metrics& metrics,
            ReconnectPolicy reconnect, Actions actions, std::string id = "");

  // A new id for this process, <daemon.name or the host>-<pid>-<6 hex>:
  // the daemon makes it before its parts, so its spans name it too.
  static std::string new_id(const Config& config);
  ~Heartbeat() override;

  const std::string& id() const { return id_; }
  // Moves the state forward (never back) and beats at once when it moved.
  void set_state(FleetState state);
  FleetState state() const { return state_.load(); }
  // Stops beating and takes the daemon out of the registry: a clean stop.
  void farewell();

 protected:
  std::chrono::milliseconds tick() override;

 private:
  // Writes the beat; returns the signals taken.
  std::vector<std::string> beat();
  static void check_written(const std::vector<Reply>& replies);
  void act(const std::vector<std::string>& signals);
  DaemonInfo read_self(std::int64_t now_ms);

  const Config& config_;
  std::vector<ClaimLoop*> loops_;
  Metrics& metrics_;
  Actions actions_;
  Executor executor_;
  std::string id_;
  std::string host_;
  std::chrono::milliseconds every_;
  std::atomic<FleetState> state_{FleetState::Running};
  // The heartbeat thread's own.
  std::optional<std::int64_t> started_ms_;  // the server's clock at the first beat
  std::optional<std::string> acted_;        // a signal acted on, for the next beat's ack
  std::optional<DaemonAck> ack_;            // the last ack written
  int failures_ = 0;                        // beats failed in a row
};

}  // namespace echomq::daemon
