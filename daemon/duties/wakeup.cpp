#include "duties/wakeup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "echomq/errors.h"
#include "echomq/slot_map_read.h"

namespace echomq::daemon {

namespace {
using std::chrono::milliseconds;

// K: keyspace channels; z: sorted-set commands (ZADD to pending). "A" is
// the alias that includes z.
bool has_flags(const std::string& flags) {
  return flags.find('K') != std::string::npos &&
         (flags.find('z') != std::string::npos || flags.find('A') != std::string::npos);
}
}  // namespace

Wakeup::Wakeup(std::vector<ClaimLoop*> loops, ConnectionOptions server, bool enable, ReconnectPolicy reconnect)
    : server_(std::move(server)), enable_(enable), reconnect_(std::move(reconnect)) {
  // The command timeout stays: it bounds CONFIG and SUBSCRIBE; messages are
  // read with read_for, which waits without it.
  for (ClaimLoop* l : loops) {
    const std::string prefix = "__keyspace@" + std::to_string(server_.db) + "__:";
    by_channel_[prefix + l->keys().pending] = {l, false};
    // A grouped job waits in its group's zset, not in pending: its enqueue
    // moves gidx, and a capped group an end lets run again leaves gwait.
    by_channel_[prefix + l->keys().gidx] = {l, false};
    by_channel_[prefix + l->keys().gwait] = {l, false};
    if (l->queue().limits && l->queue().limits->max_active) by_channel_[prefix + l->keys().active] = {l, true};
  }
}

Wakeup::~Wakeup() {
  request_stop();
  join();
}

void Wakeup::start() {
  thread_ = std::thread([this] { connect_and_listen(); });
}

void Wakeup::request_stop() { stopping_ = true; }

void Wakeup::join() {
  if (thread_.joinable()) thread_.join();
}

void Wakeup::wake(const std::vector<std::string>& channels) {
  for (const std::string& channel : channels) {
    auto it = by_channel_.find(channel);
    if (it != by_channel_.end()) it->second.loop->wake();
  }
}

void Wakeup::deliver(const std::string& channel, const std::string& event) {
  auto it = by_channel_.find(channel);
  if (it == by_channel_.end()) return;
  if (!it->second.lease_ends) {
    it->second.loop->wake();
  } else if (event == "zrem" || event == "del") {  // not a claim's or a renewal's ZADD
    it->second.loop->lease_ended();
  }
}

bool Wakeup::pause(milliseconds d, const std::atomic<bool>& stop) const {
  for (milliseconds slept(0); slept < d && !stop && !stopping_; slept += milliseconds(50)) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  return !stop && !stopping_;
}

bool Wakeup::events_on(Connection& c) {
  Reply r = c.command({"CONFIG", "GET", "notify-keyspace-events"});
  if (r.is_error()) {
    // Managed servers block CONFIG and take the setting in the provider's
    // parameters. Listening costs one idle connection if nothing comes;
    // not listening would poll for ever where the events are on.
    spdlog::info(
        "wakeup: cannot read notify-keyspace-events ({}); listening in case the server publishes them (set "
        "notify-keyspace-events Kz on the server, e.g. in the provider's parameters); idle queues also poll up to "
        "poll_max_ms",
        r.str);
    return true;
  }
  std::string flags = r.elements.size() == 2 ? r.elements[1].str : "";
  if (has_flags(flags)) return true;
  if (!enable_) {
    spdlog::info(
        "wakeup: the server publishes no keyspace events for sorted sets; idle queues poll up to "
        "poll_max_ms (set valkey.keyspace_events: true to wake at once)");
    return false;
  }
  std::string wanted = flags;
  if (wanted.find('K') == std::string::npos) wanted += 'K';
  if (wanted.find('z') == std::string::npos && wanted.find('A') == std::string::npos) wanted += 'z';
  Reply set = c.command({"CONFIG", "SET", "notify-keyspace-events", wanted});
  if (set.is_error()) {
    spdlog::warn("wakeup: cannot switch on keyspace events ({}); idle queues poll up to poll_max_ms", set.str);
    return false;
  }
  spdlog::info("wakeup: keyspace events switched on (notify-keyspace-events {})", wanted);
  return true;
}

void Wakeup::listen(Connection& c, const std::vector<std::string>& channels, const std::atomic<bool>& stop,
                    std::atomic<bool>& subscribed) {
  Command sub{"SUBSCRIBE"};
  sub.insert(sub.end(), channels.begin(), channels.end());
  c.send(sub);
  subscribed = true;
  // Work may have arrived while we were not listening.
  wake(channels);
  while (!stopping_ && !stop) {
    std::optional<Reply> msg = c.read_for(milliseconds(200));
    if (!msg || msg->type != Reply::Type::Array || msg->elements.size() != 3) continue;
    if (msg->elements[0].str != "message") continue;
    deliver(msg->elements[1].str, msg->elements[2].str);
  }
  subscribed = false;
}

// One primary's subscriber, run by follow_cluster.
struct Wakeup::NodeListener {
  NodeAddress node;
  std::vector<std::string> channels;
  std::atomic<bool> stop{false};
  std::atomic<bool> subscribed{false};
  std::thread thread;
};

void Wakeup::listen_node(NodeListener& l) {
  milliseconds delay(0);
  while (!stopping_ && !l.stop) {
    try {
      Connection c = Connection::open(node_options(server_, l.node));
      if (!events_on(c)) return;  // this node's queues poll
      delay = milliseconds(0);
      listen(c, l.channels, l.stop, l.subscribed);
      continue;  // the connection ended: try again at once
    } catch (const std::exception& e) {
      l.subscribed = false;
      delay = next_delay(delay);
      spdlog::warn("wakeup: cluster node {}: {}; retrying in {} ms", l.node.name(), e.what(), delay.count());
    }
    if (!pause(delay, l.stop)) break;
  }
}

namespace {

// The slot map, read once a second: over the connection that answered last,
// and only when that fails, from the known nodes in turn.
class SlotMapReader {
 public:
  explicit SlotMapReader(const ConnectionOptions& server) : server_(server) {}

  std::optional<SlotMap> read(const std::vector<NodeAddress>& known) {
    if (conn_) {
      try {
        return read_slot_map(*conn_, host_);
      } catch (const Error&) {
        conn_.reset();
      }
    }
    std::optional<Connection> fresh;
    const auto connection_to = [&](const NodeAddress& n) -> Connection& {
      fresh.emplace(Connection::open(node_options(server_, n)));
      return *fresh;
    };
    try {
      SlotMapAnswer answer = read_slot_map_from(known, connection_to);
      conn_.emplace(std::move(*fresh));
      host_ = answer.node.host;
      return std::move(answer.map);
    } catch (const Error&) {
      return std::nullopt;  // no node answers: the next round asks again
    }
  }

 private:
  const ConnectionOptions& server_;
  std::optional<Connection> conn_;
  std::string host_;
};

}  // namespace

void Wakeup::follow_cluster() {
  std::vector<NodeAddress> known = {NodeAddress{server_.host, server_.port}};
  std::map<std::string, std::unique_ptr<NodeListener>> listeners;  // by node name
  SlotMapReader reader(server_);
  const std::atomic<bool> never{false};
  while (!stopping_) {
    std::optional<SlotMap> map = reader.read(known);
    if (map) {
      std::map<std::string, std::pair<NodeAddress, std::vector<std::string>>> plan;
      for (const auto& [channel, target] : by_channel_) {
        const ClaimLoop* loop = target.loop;
        const NodeAddress* owner = map->owner(key_slot(loop->keys().pending));
        if (owner == nullptr) continue;
        auto& entry = plan[owner->name()];
        entry.first = *owner;
        entry.second.push_back(channel);
      }
      // A node that no longer owns the same queues is listened to afresh.
      for (auto it = listeners.begin(); it != listeners.end();) {
        auto p = plan.find(it->first);
        if (p != plan.end() && p->second.second == it->second->channels) {
          ++it;
          continue;
        }
        it->second->stop = true;
        it->second->thread.join();
        it = listeners.erase(it);
      }
      for (auto& [name, entry] : plan) {
        if (listeners.count(name) != 0) continue;
        spdlog::info("wakeup: listening on cluster node {} for {} queue(s)", name, entry.second.size());
        auto l = std::make_unique<NodeListener>();
        l->node = entry.first;
        l->channels = entry.second;
        NodeListener* raw = l.get();
        l->thread = std::thread([this, raw] { listen_node(*raw); });
        listeners.emplace(name, std::move(l));
      }
      known = map->primaries();
      known.push_back(NodeAddress{server_.host, server_.port});
    }
    bool all = !listeners.empty();
    for (const auto& [name, l] : listeners) all = all && l->subscribed;
    active_ = all;
    pause(milliseconds(1000), never);
  }
  for (auto& [name, l] : listeners) {
    l->stop = true;
    l->thread.join();
  }
  active_ = false;
}

milliseconds Wakeup::next_delay(milliseconds last) const {
  return last.count() == 0 ? reconnect_.initial : std::min(last * 2, reconnect_.max);
}

void Wakeup::connect_and_listen() {
  milliseconds delay(0);
  std::vector<std::string> channels;
  for (const auto& [channel, target] : by_channel_) channels.push_back(channel);
  const std::atomic<bool> never{false};
  while (!stopping_) {
    try {
      Connection c = Connection::open(server_);
      if (reconnect_.group) reconnect_.group->connected();
      if (cluster_enabled(c.command({"INFO", "cluster"}))) {
        follow_cluster();
        return;
      }
      if (!events_on(c)) return;  // polling alone, for the daemon's life
      delay = milliseconds(0);
      listen(c, channels, never, active_);
      continue;                          // the connection ended: try again at once
    } catch (const std::exception& e) {  // whatever the server said: never end the thread
      active_ = false;
      delay = next_delay(delay);
      spdlog::warn("wakeup: {}; retrying in {} ms", e.what(), delay.count());
    }
    pause(delay, never);
  }
  active_ = false;
}

}  // namespace echomq::daemon
