// The executor's cluster half: one connection per primary, each call sent
// to the owner of its slot, redirections followed. The executor decides
// what the calls are and how they are written; this decides where they go.
// Not thread-safe, like the executor that owns it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "echomq/cluster.h"
#include "echomq/connection.h"

namespace echomq {

// A script's SHA the node does not hold: the executor and the router both
// load the scripts again and retry once.
bool is_noscript(const Reply& r);

class ClusterRouter {
 public:
  // Run on each new node connection before its first call (the executor
  // loads its scripts there: a promoted replica has an empty cache).
  using Opened = std::function<void(Connection&)>;
  // Writes call i into the buffer.
  using Writer = std::function<void(std::size_t, RespBuffer&)>;
  // The slot of a call that names no key: any primary may take it.
  static constexpr int kAnyNode = -1;

  ClusterRouter(ConnectionOptions seed, SlotMap map);

  // Sends call i to the owner of slots[i], one pipeline per node, node
  // after node. MOVED refreshes the map and retries once; ASK retries once
  // on the named node after ASKING; NOSCRIPT reloads that node's scripts
  // and retries once. Other error replies come back in place. A node that
  // cannot be reached throws (transient) and marks the map stale.
  // opened: run on each node connection opened meanwhile (passed per call,
  // not kept, so a moved executor never leaves a stale callback here).
  std::vector<Reply> run(const std::vector<int>& slots, const Writer& write, const Opened& opened);

  // Re-reads the map from any node that answers: the ones connected first,
  // then every primary known, then the URL's node. Throws Error{Io} when
  // none does.
  void refresh();
  bool stale() const noexcept { return stale_; }
  const SlotMap& map() const noexcept { return map_; }
  // The node whose connection failed last, until a map is read again.
  const std::string& lost_node() const noexcept { return lost_; }

 private:
  struct Sent {
    NodeAddress node;
    std::vector<std::size_t> calls;
  };
  Connection& connection(const NodeAddress& node, const Opened& opened);
  void reload_scripts(const NodeAddress& node, const Opened& opened);
  static void add_to(std::vector<Sent>& groups, const NodeAddress& node, std::size_t call);
  void send_groups(const std::vector<Sent>& groups, const Writer& write, bool asking, const Opened& opened,
                   std::vector<Reply>& out);
  const NodeAddress* route(int slot) const;
  // One pipeline to one node; with asking, each call behind an ASKING.
  std::vector<Reply> send(const NodeAddress& node, const std::vector<std::size_t>& calls, const Writer& write,
                          bool asking, const Opened& opened);
  void dispatch(const std::vector<std::size_t>& calls, const std::vector<int>& slots, const Writer& write,
                const Opened& opened, std::vector<Reply>& out, std::vector<Sent>& sent);
  void follow_asks(std::vector<Reply>& out, const Writer& write, const Opened& opened);

  ConnectionOptions seed_;
  SlotMap map_;
  std::map<std::string, Connection> conns_;  // by NodeAddress::name()
  RespBuffer buf_;                           // reused from send to send
  bool stale_ = false;
  std::string lost_;
};

}  // namespace echomq
