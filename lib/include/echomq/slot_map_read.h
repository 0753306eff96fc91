// The cluster's slot map, read from whichever node answers: the one reader
// the executor's router and the daemon's wake-up share. Each keeps its
// connections its own way (a pool by node; one cached connection), so the
// connection to ask a node through is the caller's.
#pragma once

#include <functional>
#include <vector>

#include "echomq/cluster.h"
#include "echomq/connection.h"
#include "echomq/errors.h"

namespace echomq {

struct SlotMapAnswer {
  SlotMap map;
  NodeAddress node;  // the node that answered
};

// Asks `nodes` in their order for CLUSTER SLOTS, each through the
// connection `connection_to(node)` gives (it may throw Error to skip the
// node), until one answers. `failed(node, error)` hears of each node that
// did not. Throws Error{Io} naming every node's error when none answers.
SlotMapAnswer read_slot_map_from(const std::vector<NodeAddress>& nodes,
                                 const std::function<Connection&(const NodeAddress&)>& connection_to,
                                 const std::function<void(const NodeAddress&, const Error&)>& failed = {});

}  // namespace echomq
