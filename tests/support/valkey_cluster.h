// A real Valkey Cluster for one suite: primaries with replicas, each a
// ValkeyServer on free loopback ports (client port and cluster bus port),
// formed with `valkey-cli --cluster create` (or CLUSTER ADDSLOTSRANGE for a
// one-primary cluster), stopped with the object.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "valkey_server.h"

namespace echomq::test {

class ValkeyCluster {
 public:
  struct Options {
    int primaries = 3;
    int replicas_per_primary = 1;
    int node_timeout_ms = 5000;  // failures are declared by the tests, not by a busy machine
    // Every port TLS: clients, the cluster bus and replication.
    std::optional<ValkeyServer::Tls> tls;
  };
  ValkeyCluster();
  explicit ValkeyCluster(Options options);
  ValkeyCluster(const ValkeyCluster&) = delete;
  ValkeyCluster& operator=(const ValkeyCluster&) = delete;

  std::size_t size() const { return nodes_.size(); }
  ValkeyServer& node(std::size_t i) { return *nodes_.at(i); }
  std::string url(std::size_t i = 0) const { return nodes_.at(i)->url(); }
  ConnectionOptions options(std::size_t i = 0) const { return nodes_.at(i)->options(); }

  // The node (by index) that owns a slot now, as the first live node sees it.
  std::size_t owner_of(std::uint16_t slot);
  // The index of a replica of primary p.
  std::size_t replica_of(std::size_t p);
  std::vector<std::size_t> primaries();

  // Waits until every live node says cluster_state:ok and the same owner
  // for every slot, and every replica's link to its primary is up.
  void wait_ok(std::chrono::milliseconds deadline = std::chrono::seconds(30));

  // Moves one slot, live: IMPORTING on to, MIGRATING on from, MIGRATE of
  // its keys in batches, then SETSLOT NODE everywhere. between runs after
  // each batch (a test waits there for jobs to move on meanwhile).
  void migrate_slot(std::uint16_t slot, std::size_t from, std::size_t to, int batch = 10,
                    const std::function<void()>& between = {});

  std::string node_id(std::size_t i);

 private:
  bool alive(std::size_t i) { return nodes_[i]->pid() > 0; }

  Options options_;
  std::vector<std::unique_ptr<ValkeyServer>> nodes_;
};

}  // namespace echomq::test
