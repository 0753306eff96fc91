#include "wakeup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "echomq/errors.h"

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

Wakeup::Wakeup(std::vector<ClaimLoop*> loops, ConnectionOptions server, bool enable,
               std::shared_ptr<ReconnectGroup> group)
    : server_(std::move(server)), enable_(enable), group_(std::move(group)) {
  // The command timeout stays: it bounds CONFIG and SUBSCRIBE; messages are
  // read with read_for, which waits without it.
  for (ClaimLoop* l : loops) {
    by_channel_["__keyspace@" + std::to_string(server_.db) + "__:" + l->keys().pending] = l;
  }
}

Wakeup::~Wakeup() {
  request_stop();
  join();
}

void Wakeup::start() {
  thread_ = std::thread([this] { main(); });
}

void Wakeup::request_stop() { stopping_ = true; }

void Wakeup::join() {
  if (thread_.joinable()) thread_.join();
}

void Wakeup::wake_all() {
  for (auto& [channel, loop] : by_channel_) loop->wake();
}

bool Wakeup::events_on(Connection& c) {
  Reply r = c.command({"CONFIG", "GET", "notify-keyspace-events"});
  std::string flags = r.elements.size() == 2 ? r.elements[1].str : "";
  if (has_flags(flags)) return true;
  if (!enable_) {
    spdlog::info("wakeup: the server publishes no keyspace events for sorted sets; idle queues poll up to "
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

void Wakeup::listen(Connection& c) {
  Command sub{"SUBSCRIBE"};
  for (auto& [channel, loop] : by_channel_) sub.push_back(channel);
  c.send(sub);
  active_ = true;
  // Work may have arrived while we were not listening.
  wake_all();
  while (!stopping_) {
    std::optional<Reply> msg = c.read_for(milliseconds(200));
    if (!msg || msg->type != Reply::Type::Array || msg->elements.size() != 3) continue;
    if (msg->elements[0].str != "message") continue;
    auto it = by_channel_.find(msg->elements[1].str);
    if (it != by_channel_.end()) it->second->wake();
  }
}

void Wakeup::main() {
  milliseconds delay(100);
  while (!stopping_) {
    try {
      Connection c = Connection::open(server_);
      if (group_) group_->connected();
      if (!events_on(c)) return;  // polling alone, for the daemon's life
      delay = milliseconds(100);
      listen(c);
    } catch (const std::exception& e) {  // whatever the server said: never end the thread
      active_ = false;
      spdlog::warn("wakeup: {}; retrying in {} ms", e.what(), delay.count());
    }
    // Sleep in short steps so a stop is prompt.
    for (milliseconds slept(0); slept < delay && !stopping_; slept += milliseconds(50)) {
      std::this_thread::sleep_for(milliseconds(50));
    }
    delay = std::min(delay * 2, milliseconds(5000));
  }
  active_ = false;
}

}  // namespace echomq::daemon
