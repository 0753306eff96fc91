#include "valkey_cluster.h"

#include <stdexcept>

#include "echomq/cluster.h"
#include "echomq/connection.h"
#include "echomq/errors.h"
#include "wait_for.h"

namespace echomq::test {

namespace {
Reply ask(ValkeyServer& s, const Command& argv) {
  Connection c = Connection::open(s.options());
  return c.command(argv);
}

std::string field(const std::string& info, const std::string& name) {
  const std::size_t at = info.find(name + ":");
  if (at == std::string::npos) return "";
  const std::size_t start = at + name.size() + 1;
  return info.substr(start, info.find('\r', start) - start);
}
}  // namespace

ValkeyCluster::ValkeyCluster() : ValkeyCluster(Options{}) {}

ValkeyCluster::ValkeyCluster(Options options) : options_(options) {
  if (options_.primaries < 3 && options_.replicas_per_primary != 0) {
    throw std::invalid_argument("a cluster of fewer than 3 primaries is formed without replicas here");
  }
  const int count = options_.primaries * (1 + options_.replicas_per_primary);
  std::vector<int> bus_ports;
  for (int i = 0; i < count; ++i) {
    // The bus port is given: port + 10000 may be past 65535 for an ephemeral port.
    bus_ports.push_back(free_loopback_port());
    ValkeyServer::Options o;
    o.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
                    std::to_string(options_.node_timeout_ms), "--cluster-port", std::to_string(bus_ports.back()),
                    // Replicas stay with the primary the test gave them.
                    "--cluster-allow-replica-migration", "no"};
    if (options_.tls) {
      o.tls = options_.tls;
      o.extra_args.insert(o.extra_args.end(), {"--tls-cluster", "yes", "--tls-replication", "yes"});
    }
    nodes_.push_back(std::make_unique<ValkeyServer>(o));
  }
  if (options_.primaries >= 3) {
    std::vector<std::string> args;
    if (options_.tls) args = {"--tls", "--cacert", options_.tls->ca_file};
    args.insert(args.end(), {"--cluster", "create"});
    for (auto& n : nodes_) args.push_back("127.0.0.1:" + std::to_string(n->port()));
    args.insert(args.end(), {"--cluster-replicas", std::to_string(options_.replicas_per_primary), "--cluster-yes"});
    const std::string out = nodes_[0]->cli(args);
    if (out.find("[OK] All 16384 slots covered") == std::string::npos) {
      throw std::runtime_error("valkey-cli --cluster create failed: " + out);
    }
  } else {
    // valkey-cli asks for three primaries at least; one takes every slot.
    for (int p = 0; p < options_.primaries; ++p) {
      const int first = p * kClusterSlots / options_.primaries;
      const int last = (p + 1) * kClusterSlots / options_.primaries - 1;
      ask(*nodes_[p], {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)});
      if (p > 0) {
        ask(*nodes_[p],
            {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes_[0]->port()), std::to_string(bus_ports[0])});
      }
    }
  }
  wait_ok();
}

std::string ValkeyCluster::node_id(std::size_t i) { return ask(*nodes_.at(i), {"CLUSTER", "MYID"}).str; }

std::size_t ValkeyCluster::owner_of(std::uint16_t slot) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!alive(i)) continue;
    SlotMap map = SlotMap::from_cluster_slots(ask(*nodes_[i], {"CLUSTER", "SLOTS"}), "127.0.0.1");
    const NodeAddress* owner = map.owner(slot);
    if (owner == nullptr) break;
    for (std::size_t j = 0; j < nodes_.size(); ++j) {
      if (nodes_[j]->port() == owner->port) return j;
    }
  }
  throw std::runtime_error("no live node knows the owner of slot " + std::to_string(slot));
}

std::vector<std::size_t> ValkeyCluster::primaries() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (alive(i) && field(ask(*nodes_[i], {"INFO", "replication"}).str, "role") == "master") out.push_back(i);
  }
  return out;
}

std::size_t ValkeyCluster::replica_of(std::size_t p) {
  const std::string port = std::to_string(nodes_.at(p)->port());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (i == p || !alive(i)) continue;
    const std::string info = ask(*nodes_[i], {"INFO", "replication"}).str;
    if (field(info, "role") == "slave" && field(info, "master_port") == port) return i;
  }
  throw std::runtime_error("node " + std::to_string(p) + " has no live replica");
}

void ValkeyCluster::wait_ok(std::chrono::milliseconds deadline) {
  std::string why;
  const bool ok = wait_for(
      [&] {
        try {
          std::vector<std::uint16_t> first;
          for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (!alive(i)) continue;
            if (field(ask(*nodes_[i], {"CLUSTER", "INFO"}).str, "cluster_state") != "ok") {
              why = "node " + std::to_string(i) + " is not cluster_state:ok";
              return false;
            }
            const std::string repl = ask(*nodes_[i], {"INFO", "replication"}).str;
            if (field(repl, "role") == "slave" && field(repl, "master_link_status") != "up") {
              why = "replica " + std::to_string(i) + " has no link to its primary";
              return false;
            }
            SlotMap map = SlotMap::from_cluster_slots(ask(*nodes_[i], {"CLUSTER", "SLOTS"}), "127.0.0.1");
            std::vector<std::uint16_t> owners;
            for (std::uint16_t s = 0; s < kClusterSlots; s += 1) {
              const NodeAddress* o = map.owner(s);
              owners.push_back(o == nullptr ? 0 : static_cast<std::uint16_t>(o->port));
            }
            if (first.empty()) first = owners;
            if (owners != first) {
              why = "node " + std::to_string(i) + " sees another slot map";
              return false;
            }
          }
          return true;
        } catch (const Error& e) {
          why = e.what();
          return false;
        }
      },
      deadline);
  if (!ok) throw std::runtime_error("the cluster did not settle: " + why);
}

void ValkeyCluster::migrate_slot(std::uint16_t slot, std::size_t from, std::size_t to, int batch,
                                 const std::function<void()>& between) {
  const std::string s = std::to_string(slot);
  const std::string from_id = node_id(from);
  const std::string to_id = node_id(to);
  auto expect_ok = [](const Reply& r, const std::string& what) {
    if (r.is_error()) throw std::runtime_error(what + ": " + r.str);
  };
  expect_ok(ask(*nodes_[to], {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}), "SETSLOT IMPORTING");
  expect_ok(ask(*nodes_[from], {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id}), "SETSLOT MIGRATING");
  Connection src = Connection::open(nodes_[from]->options());
  while (true) {
    Reply keys = src.command({"CLUSTER", "GETKEYSINSLOT", s, std::to_string(batch)});
    if (keys.elements.empty()) break;
    Command migrate = {"MIGRATE", "127.0.0.1", std::to_string(nodes_[to]->port()), "", "0", "5000", "KEYS"};
    for (const Reply& k : keys.elements) migrate.push_back(k.str);
    expect_ok(src.command(migrate), "MIGRATE");
    if (between) between();
  }
  // The new owner first, then the old, then everyone else (what the
  // cluster's own resharding does).
  expect_ok(ask(*nodes_[to], {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE (to)");
  expect_ok(ask(*nodes_[from], {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE (from)");
  for (std::size_t p : primaries()) {
    if (p != from && p != to) ask(*nodes_[p], {"CLUSTER", "SETSLOT", s, "NODE", to_id});
  }
}

}  // namespace echomq::test
