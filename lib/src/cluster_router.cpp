#include "cluster_router.h"

#include <algorithm>
#include <set>

#include "echomq/errors.h"
#include "echomq/keyspace.h"
#include "echomq/slot_map_read.h"

namespace echomq {

bool is_noscript(const Reply& r) { return r.is_error() && r.str.rfind("NOSCRIPT", 0) == 0; }

namespace {
Reply error_reply(std::string text) {
  Reply r;
  r.type = Reply::Type::Error;
  r.str = std::move(text);
  return r;
}
}  // namespace

ClusterRouter::ClusterRouter(ConnectionOptions seed, SlotMap map) : seed_(std::move(seed)), map_(std::move(map)) {}

Connection& ClusterRouter::connection(const NodeAddress& node, const Opened& opened) {
  const std::string name = node.name();
  auto it = conns_.find(name);
  if (it != conns_.end() && !it->second.broken()) return it->second;
  if (it != conns_.end()) conns_.erase(it);
  try {
    Connection c = Connection::open(node_options(seed_, node));
    opened(c);
    return conns_.emplace(name, std::move(c)).first->second;
  } catch (const Error& e) {
    if (!e.transient()) throw;
    stale_ = true;
    lost_ = name;
    throw Error(e.kind(), e.op(), std::string("cluster node ") + name + ": " + e.what());
  }
}

// A connection opened afresh has run `opened` already; a live one that
// answered NOSCRIPT (its node restarted or flushed) runs it now.
void ClusterRouter::reload_scripts(const NodeAddress& node, const Opened& opened) {
  auto it = conns_.find(node.name());
  if (it != conns_.end() && !it->second.broken()) {
    opened(it->second);
  } else {
    connection(node, opened);
  }
}

// A call that names no key goes to the owner of {emq}: always the same
// node, and one that holds the wire identity, so it is a node we know.
const NodeAddress* ClusterRouter::route(int slot) const {
  if (slot == kAnyNode) return map_.owner(key_slot(kVersionKey));
  return map_.owner(static_cast<std::uint16_t>(slot));
}

std::vector<Reply> ClusterRouter::send(const NodeAddress& node, const std::vector<std::size_t>& calls,
                                       const Writer& write, bool asking, const Opened& opened) {
  Connection& c = connection(node, opened);
  buf_.clear();
  for (std::size_t i : calls) {
    if (asking) buf_.add({"ASKING"});
    write(i, buf_);
  }
  try {
    std::vector<Reply> replies = c.pipeline(buf_);
    if (!asking) return replies;
    std::vector<Reply> answers;
    for (std::size_t k = 1; k < replies.size(); k += 2) answers.push_back(std::move(replies[k]));
    return answers;
  } catch (const Error&) {
    if (c.broken()) {
      conns_.erase(node.name());
      stale_ = true;
      lost_ = node.name();
    }
    throw;
  }
}

void ClusterRouter::add_to(std::vector<Sent>& groups, const NodeAddress& node, std::size_t call) {
  auto it = std::find_if(groups.begin(), groups.end(), [&](const Sent& s) { return s.node == node; });
  if (it == groups.end()) it = groups.insert(groups.end(), Sent{node, {}});
  it->calls.push_back(call);
}

void ClusterRouter::send_groups(const std::vector<Sent>& groups, const Writer& write, bool asking, const Opened& opened,
                                std::vector<Reply>& out) {
  for (const Sent& s : groups) {
    std::vector<Reply> replies = send(s.node, s.calls, write, asking, opened);
    for (std::size_t k = 0; k < s.calls.size(); ++k) out[s.calls[k]] = std::move(replies[k]);
  }
}

void ClusterRouter::dispatch(const std::vector<std::size_t>& calls, const std::vector<int>& slots, const Writer& write,
                             const Opened& opened, std::vector<Reply>& out, std::vector<Sent>& sent) {
  sent.clear();
  for (std::size_t i : calls) {
    const NodeAddress* owner = route(slots[i]);
    if (owner == nullptr) {
      // A transient answer, as the cluster itself gives for such a slot.
      out[i] = error_reply("CLUSTERDOWN Hash slot " + std::to_string(slots[i]) + " is not served by any node");
      continue;
    }
    add_to(sent, *owner, i);
  }
  send_groups(sent, write, false, opened, out);
}

// ASK: the slot is moving and this key is already on the importing node;
// ask there, this once, without changing the map.
void ClusterRouter::follow_asks(std::vector<Reply>& out, const Writer& write, const Opened& opened) {
  std::vector<Sent> asks;
  for (std::size_t i = 0; i < out.size(); ++i) {
    Redirect r;
    if (!parse_redirect(out[i], r) || !r.ask) continue;
    add_to(asks, r.node, i);
  }
  send_groups(asks, write, true, opened, out);
}

std::vector<Reply> ClusterRouter::run(const std::vector<int>& slots, const Writer& write, const Opened& opened) {
  std::vector<Reply> out(slots.size());
  std::vector<std::size_t> all(slots.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<Sent> sent;
  dispatch(all, slots, write, opened, out, sent);
  follow_asks(out, write, opened);

  // Once more for what was moved or whose script the node had lost.
  std::vector<std::size_t> again;
  std::vector<Redirect> moves;
  for (std::size_t i = 0; i < out.size(); ++i) {
    Redirect r;
    if (parse_redirect(out[i], r) && !r.ask) {
      again.push_back(i);
      moves.push_back(r);
    }
  }
  std::set<std::string> reload;
  for (const Sent& s : sent) {
    for (std::size_t i : s.calls) {
      if (!is_noscript(out[i])) continue;
      again.push_back(i);
      if (reload.insert(s.node.name()).second) reload_scripts(s.node, opened);
    }
  }
  if (again.empty()) return out;
  if (!moves.empty()) {
    try {
      refresh();
    } catch (const Error&) {
      // The redirections below still say where these slots went.
    }
    // The node that answered MOVED knows its slot's new owner before
    // gossip has told every other node.
    for (const Redirect& r : moves) map_.assign(r.slot, r.node);
  }
  std::sort(again.begin(), again.end());
  dispatch(again, slots, write, opened, out, sent);
  follow_asks(out, write, opened);
  return out;
}

void ClusterRouter::refresh() {
  std::vector<NodeAddress> order;
  auto add = [&](const NodeAddress& n) {
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  };
  for (const NodeAddress& n : map_.primaries()) {
    if (conns_.count(n.name()) != 0 && n.name() != lost_) add(n);
  }
  for (const NodeAddress& n : map_.primaries()) {
    if (n.name() != lost_) add(n);
  }
  add(NodeAddress{seed_.host, seed_.port});
  for (const NodeAddress& n : map_.primaries()) {
    if (n.name() == lost_) add(n);  // the lost one last: it may be back
  }

  // A node with a good connection is asked through it; any other through
  // one opened for the question, and let go after.
  std::optional<Connection> fresh;
  const auto connection_to = [&](const NodeAddress& n) -> Connection& {
    auto it = conns_.find(n.name());
    if (it != conns_.end() && !it->second.broken()) return it->second;
    fresh.emplace(Connection::open(node_options(seed_, n)));
    return *fresh;
  };
  try {
    map_ = read_slot_map_from(order, connection_to, [&](const NodeAddress& n, const Error&) {
             conns_.erase(n.name());
           }).map;
  } catch (const Error&) {
    stale_ = true;
    throw;
  }
  stale_ = false;
  lost_.clear();
  // Connections to nodes that are no longer primaries only answer MOVED.
  for (auto c = conns_.begin(); c != conns_.end();) {
    const bool primary = std::any_of(map_.primaries().begin(), map_.primaries().end(),
                                     [&](const NodeAddress& p) { return p.name() == c->first; });
    c = primary ? std::next(c) : conns_.erase(c);
  }
}

}  // namespace echomq
