#include "fleet_signal.h"

#include <algorithm>
#include <thread>

namespace echomq::cli {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kReadEvery{50};
constexpr milliseconds kBeyondTwoBeats{5000};
constexpr std::int64_t kUnknownBeatMs = 5000;  // the default beat_s

std::int64_t since_ms(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count();
}
}  // namespace

bool answers(const std::optional<DaemonAck>& ack, std::string_view signal, std::int64_t sent_ms) {
  if (!ack || ack->at_ms < sent_ms) return false;
  return ack->signal == signal || (signal == kSignalQuiet && ack->signal == kSignalStop);
}

std::vector<DaemonAnswer> signal_and_wait(Executor& x, const std::vector<DaemonInfo>& to, std::string_view signal,
                                          std::optional<milliseconds> timeout) {
  const std::int64_t sent_ms = x.server_time_ms();
  const Clock::time_point sent_at = Clock::now();
  std::vector<DaemonAnswer> out;
  std::vector<Clock::time_point> deadline;
  for (const DaemonInfo& d : to) {
    DaemonAnswer a;
    a.id = d.id;
    a.last = d;
    a.sent = send_signal(x, d, signal);
    a.left = !a.sent;
    const std::int64_t beat = d.beat_every_ms(sent_ms).value_or(kUnknownBeatMs);
    deadline.push_back(sent_at + timeout.value_or(milliseconds(2 * beat) + kBeyondTwoBeats));
    out.push_back(std::move(a));
  }
  while (true) {
    std::vector<std::string> waiting;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const DaemonAnswer& a = out[i];
      if (a.sent && !a.answered && !a.left && Clock::now() < deadline[i]) waiting.push_back(a.id);
    }
    if (waiting.empty()) break;
    std::this_thread::sleep_for(kReadEvery);
    const std::vector<DaemonRead> now = read_daemons(x, waiting, false);
    for (std::size_t w = 0; w < waiting.size(); ++w) {
      auto a = std::find_if(out.begin(), out.end(), [&](const DaemonAnswer& e) { return e.id == waiting[w]; });
      a->waited_ms = since_ms(sent_at);
      // A hash another writer broke meanwhile has no ack to read: the
      // daemon may still answer once it is mended, until the deadline.
      if (!now[w].problem.empty()) continue;
      if (!now[w].daemon) {
        // Gone: a stop that drained and left before we looked again is its
        // answer; for a quiet, the daemon ended some other way.
        a->left = true;
        a->answered = signal == kSignalStop;
        continue;
      }
      a->last = now[w].daemon;
      a->answered = answers(now[w].daemon->ack, signal, sent_ms);
    }
  }
  return out;
}

}  // namespace echomq::cli
