// Valkey Cluster, as a client sees it: the slot of a key (CRC16 of its
// hashtag, as the cluster computes it), the map from slots to the primaries
// that own them (read with CLUSTER SLOTS), and the options for reaching one
// node with the login, timeouts and TLS of the URL the user gave.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/connection.h"
#include "echomq/url.h"

namespace echomq {

inline constexpr std::uint16_t kClusterSlots = 16384;

// CRC16-CCITT (XMODEM) of the key's hashtag (the bytes between the first
// '{' and the next '}', when not empty), else of the whole key, mod 16384.
std::uint16_t key_slot(std::string_view key);

// The key a command is routed by (its first argument), or "" for commands
// that name no key (TIME, CONFIG, PING, ...): any primary may answer those.
std::string_view routing_key(const Command& argv);

struct NodeAddress {
  std::string host;
  int port = 0;
  std::string name() const { return host + ":" + std::to_string(port); }
  bool operator==(const NodeAddress& o) const { return host == o.host && port == o.port; }
};

// Which primary owns each slot. Empty until read.
class SlotMap {
 public:
  // From CLUSTER SLOTS' answer. A node that announces no endpoint ("" or
  // "?") is reached at seed_host, the host the answer came from.
  static SlotMap from_cluster_slots(const Reply& slots, const std::string& seed_host);

  bool empty() const noexcept { return primaries_.empty(); }
  // The owner of a slot, or nullptr for a slot no primary serves.
  const NodeAddress* owner(std::uint16_t slot) const;
  const std::vector<NodeAddress>& primaries() const noexcept { return primaries_; }
  // How many slots have an owner (16384 on a healthy cluster).
  std::size_t covered() const;
  // Sets one slot's owner (a MOVED answer, fresher than any map).
  void assign(std::uint16_t slot, const NodeAddress& node);

 private:
  int index_of(const NodeAddress& node);
  std::vector<NodeAddress> primaries_;
  std::vector<std::int16_t> owner_ = std::vector<std::int16_t>(kClusterSlots, -1);
};

// Reads the map through a connection to any node. Throws Error{Reply} when
// the node refuses CLUSTER SLOTS, Error{Io} when no slot is served yet.
SlotMap read_slot_map(Connection& c, const std::string& seed_host);

// The seed's options pointed at one node: same login, timeouts, executor
// and TLS files; over TLS the name verified is server_name when given,
// else the URL's host name (one certificate for the cluster), else, when
// the URL gave an address, the node's own host.
ConnectionOptions node_options(const ConnectionOptions& seed, const NodeAddress& node);

// True when INFO cluster's answer says cluster_enabled:1.
bool cluster_enabled(const Reply& info);

// A redirection answer: "MOVED 3999 127.0.0.1:6381" or "ASK ...".
struct Redirect {
  bool ask = false;  // ASK: this one call, after ASKING; MOVED: from now on
  std::uint16_t slot = 0;
  NodeAddress node;
};
// The redirection an error reply names, if it is one.
bool parse_redirect(const Reply& r, Redirect& out);

}  // namespace echomq
