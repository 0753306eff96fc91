// Wakes idle claim loops the moment new work lands, from keyspace events
// on each queue's pending set (`__keyspace@<db>__:emq:{q}:pending`). Polling
// stays the safety net: a lost event costs at most poll_max_ms. For a
// queue with max_active in its config it also hears leases end (a ZREM on
// `emq:{q}:active`), which a loop held back at max_active waits for.
//
// A cluster node publishes only its own keys' events, so on a cluster one
// subscriber runs per primary that owns one of the queues, and the slot
// map is read again every second: when a queue's slot moves (resharding,
// failover) its channel is subscribed on the new owner.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "claim_loop.h"
#include "echomq/cluster.h"
#include "echomq/executor.h"
#include "echomq/url.h"

namespace echomq::daemon {

class Wakeup {
 public:
  // enable: set notify-keyspace-events to include what we need
  // (valkey.keyspace_events: true); otherwise only subscribe when the
  // server already publishes them.
  // `reconnect`: the daemon's policy (its bounds pace this subscriber's
  // retries; its group is told when the subscriber connects).
  Wakeup(std::vector<ClaimLoop*> loops, ConnectionOptions server, bool enable, ReconnectPolicy reconnect = {});
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  void start();
  void request_stop();
  void join();
  // True while subscribed to a server that publishes the events we need.
  bool active() const { return active_.load(); }

 private:
  void connect_and_listen();
  struct NodeListener;
  bool events_on(Connection& c);
  // Subscribes c to channels and wakes their loops on each event, until stop.
  void listen(Connection& c, const std::vector<std::string>& channels, const std::atomic<bool>& stop,
              std::atomic<bool>& subscribed);
  void wake(const std::vector<std::string>& channels);
  void follow_cluster();
  void listen_node(NodeListener& l);
  // Sleeps in short steps, so a stop is prompt; false when stopped.
  bool pause(std::chrono::milliseconds d, const std::atomic<bool>& stop) const;
  // The wait after the failed attempt whose previous wait was `last` (zero:
  // the first failure), on the reconnect policy's bounds.
  std::chrono::milliseconds next_delay(std::chrono::milliseconds last) const;

  // A channel's loop, and whether it tells of leases ending rather than
  // of new work.
  struct Target {
    ClaimLoop* loop;
    bool lease_ends;
  };
  std::map<std::string, Target> by_channel_;
  // On the channel's message (the event's name).
  void deliver(const std::string& channel, const std::string& event);
  ConnectionOptions server_;
  bool enable_;
  ReconnectPolicy reconnect_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> active_{false};
  std::thread thread_;
};

}  // namespace echomq::daemon
