#include "web/events.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

// A block that ends without news sends a comment: a page that went away
// is found out by the write, at the latest one block later.
constexpr std::chrono::milliseconds kBlock{15000};
constexpr std::chrono::seconds kSendTimeout{10};

std::atomic<int> open_streams{0};

// One of the kMaxEventStreams, taken at the check that admits the request
// and held by its stream until the stream ends (or the server drops it
// unsent). The check and the count are one step: counted only once the
// stream's thread ran, a burst of requests all passed the check first.
class StreamSlot {
 public:
  // nullptr when every slot is taken.
  static std::shared_ptr<StreamSlot> take() {
    int open = open_streams.load();
    do {
      if (open >= kMaxEventStreams) return nullptr;
    } while (!open_streams.compare_exchange_weak(open, open + 1));
    return std::shared_ptr<StreamSlot>(new StreamSlot());
  }
  ~StreamSlot() { --open_streams; }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

 private:
  StreamSlot() = default;
};

// The whole text, or false when the page went away.
bool send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

std::string frame(const std::string& event, const std::string& data, const std::string& id = "") {
  return (id.empty() ? "" : "id: " + id + "\n") + "event: " + event + "\ndata: " + data + "\n\n";
}

// queue: named in the entry when one stream carries several queues.
std::string entry_json(const EventEntry& e, const std::string& queue = "") {
  nlohmann::ordered_json o = {{"entry", e.entry_id}};
  if (!queue.empty()) o["queue"] = queue;
  put_bytes(o, "event", e.event);
  put_bytes(o, "id", e.job_id);
  put_bytes(o, "attempt", e.attempt);
  if (!e.error.empty()) o["error"] = shown_bytes(e.error, 256);
  if (!e.progress.empty()) o["progress"] = shown_bytes(e.progress, 1024);
  return o.dump();
}

// Blocking writes that give up after kSendTimeout on a page that stopped reading.
void blocking_sends(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const timeval tv{static_cast<time_t>(kSendTimeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// Where to follow q's stream from (its last entry), or nullopt when the
// queue keeps no events.
std::optional<std::string> start_of(Executor& x, const QueueKeys& q) {
  const std::vector<Reply> at = x.pipeline({events_read(q), {"XREVRANGE", q.events, "+", "-", "COUNT", "1"}});
  if (decode_events(at[0]) == 0) return std::nullopt;
  const std::vector<EventEntry> last = decode_entries(at[1]);
  return last.empty() ? "0-0" : last.front().entry_id;
}

// The frames of the entries after `from` (moved on past them), "" when
// none came within `block`. named: the queue each entry names, for a
// stream of several; a stream of one names none and gives entry ids.
std::string next_frames(Executor& x, const QueueKeys& q, std::string& from, std::chrono::milliseconds block,
                        const std::string& named) {
  Reply r = x.command({"XREAD", "COUNT", "100", "BLOCK", std::to_string(block.count()), "STREAMS", q.events, from});
  if (r.is_error()) throw error_from_reply("events", r.str);
  std::string out;
  for (const Reply& stream : r.elements) {
    if (stream.elements.size() != 2) continue;
    for (const EventEntry& e : decode_entries(stream.elements[1])) {
      out += frame("job", entry_json(e, named), named.empty() ? e.entry_id : "");
      from = e.entry_id;
    }
  }
  return out;
}

std::string queue_data(const std::string& queue) { return "{\"queue\":" + nlohmann::json(queue).dump() + "}"; }

// A stream's socket. The overview's is written by one reader per queue: a
// frame is sent whole under the mutex, so frames of two queues never
// interleave; a stream of one queue has one writer.
class SharedSocket {
 public:
  explicit SharedSocket(int fd) : fd_(fd) {}
  bool send(const std::string& text) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (gone_) return false;
    if (!send_all(fd_, text)) gone_ = true;
    return !gone_;
  }
  bool gone() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return gone_;
  }

 private:
  int fd_;
  std::mutex mutex_;
  bool gone_ = false;
};

// A reader's block is short so that a page gone frees its connections
// within it; the keep-alive comes from the stream's own thread.
constexpr std::chrono::milliseconds kOverviewBlock{5000};

std::atomic<int> overview_readers{0};

struct Reserved {
  explicit Reserved(int readers) : n(readers) { overview_readers += n; }
  ~Reserved() { overview_readers -= n; }
  Reserved(const Reserved&) = delete;
  Reserved& operator=(const Reserved&) = delete;
  int n;
};

// One queue's stream onto out: `off` when it keeps no events, else `ready`
// and its entries as they come, until the page goes. A stream of one
// queue (shared false) gives entry ids and its own keep-alive comment per
// idle block; one of several names the queue in each frame, and its
// thread keeps the connection alive.
void follow(ConnectionOptions server, const std::string& queue, SharedSocket& out, bool shared) {
  const std::chrono::milliseconds block = shared ? kOverviewBlock : kBlock;
  try {
    const QueueKeys q(queue);
    server.command_timeout = block + std::chrono::seconds(10);
    Executor x(server);
    std::optional<std::string> from = start_of(x, q);
    if (!from) {
      out.send(frame("off", queue_data(queue)));
      return;
    }
    if (!out.send(shared ? frame("ready", queue_data(queue)) : "retry: 2000\n" + frame("ready", "{}"))) return;
    while (!out.gone()) {
      const std::string text = next_frames(x, q, *from, block, shared ? queue : "");
      if (text.empty() && shared) continue;
      if (!out.send(text.empty() ? std::string(": still here\n\n") : text)) return;
    }
  } catch (const std::exception& e) {
    nlohmann::json trouble = {{"error", e.what()}};
    if (shared) trouble = {{"queue", queue}, {"error", e.what()}};
    out.send(frame("trouble", trouble.dump()));
  }
}

void serve(const ConnectionOptions& server, const std::string& queue, daemon::Fd fd) {
  blocking_sends(fd.get());
  SharedSocket out(fd.get());
  follow(server, queue, out, false);
}

void serve_overview(ConnectionOptions server, const std::vector<std::string>& queues, daemon::Fd fd) {
  blocking_sends(fd.get());
  SharedSocket out(fd.get());
  if (!out.send("retry: 2000\n\n")) return;
  std::mutex m;
  std::condition_variable cv;
  std::size_t running = queues.size();
  std::vector<std::thread> readers;
  const auto done = [&] {
    const std::lock_guard<std::mutex> lock(m);
    --running;
    cv.notify_all();
  };
  for (const std::string& q : queues) {
    try {
      readers.emplace_back([&, q] {
        follow(server, q, out, true);
        done();
      });
    } catch (const std::system_error& e) {
      // No thread to spare: that queue is polled, the others still followed.
      out.send(frame("trouble", nlohmann::json({{"queue", q}, {"error", e.what()}}).dump()));
      done();
    }
  }
  {
    std::unique_lock<std::mutex> lock(m);
    // Every queue off (or failed): the stream ends and the page polls.
    while (running > 0 && !cv.wait_for(lock, kBlock, [&] { return running == 0; })) {
      lock.unlock();
      const bool alive = out.send(": still here\n\n");
      lock.lock();
      if (!alive) break;
    }
  }
  for (std::thread& t : readers) t.join();
}

}  // namespace

daemon::HttpResponse events_response(const ConnectionOptions& server, const std::string& queue) {
  daemon::HttpResponse r;
  if (!valid_queue_name(queue)) {
    r.status = 400;
    r.body = "queue: expected ?queue= and a queue name (1-64 bytes of A-Z a-z 0-9 _ . -)\n";
    return r;
  }
  std::shared_ptr<StreamSlot> slot = StreamSlot::take();
  if (!slot) {
    r.status = 503;
    r.body = "too many event streams open: the page polls instead\n";
    return r;
  }
  r.content_type = "text/event-stream";
  r.stream = [server, queue, slot](daemon::Fd fd) { serve(server, queue, std::move(fd)); };
  return r;
}

daemon::HttpResponse overview_events_response(const ConnectionOptions& server, const std::vector<std::string>& queues) {
  daemon::HttpResponse r;
  const auto refuse = [&r](int status, std::string why) {
    r.status = status;
    r.body = std::move(why);
    return r;
  };
  if (queues.empty()) return refuse(400, "queue: expected one ?queue= per queue followed\n");
  if (queues.size() > static_cast<std::size_t>(kMaxOverviewQueues)) {
    return refuse(400, "too many queues: one stream follows at most " + std::to_string(kMaxOverviewQueues) +
                           "; poll the others\n");
  }
  for (const std::string& q : queues) {
    if (!valid_queue_name(q)) {
      return refuse(400, "queue '" + q.substr(0, 64) + "' is not a queue name (1-64 bytes of A-Z a-z 0-9 _ . -)\n");
    }
  }
  const int n = static_cast<int>(queues.size());
  // Both held by the stream until it ends, or until the server drops it unsent.
  std::shared_ptr<StreamSlot> slot = StreamSlot::take();
  if (!slot) return refuse(503, "too many event streams open: the page polls instead\n");
  auto held = std::make_shared<Reserved>(n);
  if (overview_readers.load() > kMaxOverviewReaders) {
    return refuse(503, "too many queues followed at once: the page polls instead\n");
  }
  r.content_type = "text/event-stream";
  r.stream = [server, queues, slot, held](daemon::Fd fd) { serve_overview(server, queues, std::move(fd)); };
  return r;
}

}  // namespace echomq::cli
