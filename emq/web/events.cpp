#include "web/events.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>

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

struct Counted {
  Counted() { ++open_streams; }
  ~Counted() { --open_streams; }
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

std::string entry_json(const EventEntry& e) {
  nlohmann::ordered_json o = {{"entry", e.entry_id}};
  put_bytes(o, "event", e.event);
  put_bytes(o, "id", e.job_id);
  put_bytes(o, "attempt", e.attempt);
  if (!e.error.empty()) o["error"] = shown_bytes(e.error, 256);
  if (!e.progress.empty()) o["progress"] = shown_bytes(e.progress, 1024);
  return o.dump();
}

void serve(ConnectionOptions server, const std::string& queue, daemon::Fd fd) {
  const Counted counted;
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  const timeval tv{static_cast<time_t>(kSendTimeout.count()), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  try {
    const QueueKeys q(queue);
    server.command_timeout = kBlock + std::chrono::seconds(10);
    Executor x(server);
    const std::vector<Reply> at = x.pipeline({events_read(q), {"XREVRANGE", q.events, "+", "-", "COUNT", "1"}});
    if (decode_events(at[0]) == 0) {
      send_all(fd.get(), frame("off", "{\"queue\":" + nlohmann::json(queue).dump() + "}"));
      return;
    }
    const std::vector<EventEntry> last = decode_entries(at[1]);
    std::string from = last.empty() ? "0-0" : last.front().entry_id;
    if (!send_all(fd.get(), "retry: 2000\n" + frame("ready", "{}"))) return;
    while (true) {
      Reply r =
          x.command({"XREAD", "COUNT", "100", "BLOCK", std::to_string(kBlock.count()), "STREAMS", q.events, from});
      if (r.is_error()) throw error_from_reply("events", r.str);
      std::string out;
      for (const Reply& stream : r.elements) {
        if (stream.elements.size() != 2) continue;
        for (const EventEntry& e : decode_entries(stream.elements[1])) {
          out += frame("job", entry_json(e), e.entry_id);
          from = e.entry_id;
        }
      }
      if (!send_all(fd.get(), out.empty() ? std::string(": still here\n\n") : out)) return;
    }
  } catch (const std::exception& e) {
    send_all(fd.get(), frame("trouble", nlohmann::json({{"error", e.what()}}).dump()));
  }
}

}  // namespace

daemon::HttpResponse events_response(const ConnectionOptions& server, const std::string& queue) {
  daemon::HttpResponse r;
  if (!valid_queue_name(queue)) {
    r.status = 400;
    r.body = "queue: expected ?queue= and a queue name (1-64 bytes of A-Z a-z 0-9 _ . -)\n";
    return r;
  }
  if (open_streams.load() >= kMaxEventStreams) {
    r.status = 503;
    r.body = "too many event streams open: the page polls instead\n";
    return r;
  }
  r.content_type = "text/event-stream";
  r.stream = [server, queue](daemon::Fd fd) { serve(server, queue, std::move(fd)); };
  return r;
}

}  // namespace echomq::cli
