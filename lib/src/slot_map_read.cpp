#include "echomq/slot_map_read.h"

#include "echomq/errors.h"

namespace echomq {

SlotMapAnswer read_slot_map_from(const std::vector<NodeAddress>& nodes,
                                 const std::function<Connection&(const NodeAddress&)>& connection_to,
                                 const std::function<void(const NodeAddress&, const Error&)>& failed) {
  std::string errors;
  for (const NodeAddress& n : nodes) {
    try {
      return {read_slot_map(connection_to(n), n.host), n};
    } catch (const Error& e) {
      if (!errors.empty()) errors += "; ";
      errors += n.name() + ": " + e.what();
      if (failed) failed(n, e);
    }
  }
  throw Error(ErrorKind::Io, "cluster slots", "no node of the cluster answers (" + errors + ")");
}

}  // namespace echomq
