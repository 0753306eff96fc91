#include "duties/history_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "echomq/history.h"

namespace echomq::daemon {

namespace {
constexpr std::int64_t kHourMs = 3'600'000;
// Past the minute's start by this much, so that a steady clock running a
// little fast against the server's still wakes in the new minute.
constexpr std::int64_t kPastTheMinuteMs = 250;
}  // namespace

HistoryWriter::HistoryWriter(Params params, const ConnectionOptions& server, Metrics* metrics,
                             ReconnectPolicy reconnect)
    : Periodic("history writer"), params_(std::move(params)), executor_(server, std::move(reconnect), metrics) {}

HistoryWriter::~HistoryWriter() {
  request_stop();
  join();
}

// Said when it appears and when it mends, not every minute.
void HistoryWriter::note(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  if (text == problems_) return;
  if (text.empty()) {
    spdlog::info("history writer: every queue's history is written again");
  } else {
    spdlog::warn(
        "history writer: another writer broke {}; the other queues' history is written (DEL the key to "
        "start its history again)",
        text);
  }
  problems_ = std::move(text);
}

std::chrono::milliseconds HistoryWriter::tick() {
  const std::int64_t now = params_.now_ms ? params_.now_ms() : executor_.server_time_ms();
  const std::int64_t minute = now / kHistoryMinuteMs;
  std::vector<std::string> problems;
  const bool due = minute != written_minute_ || now / kHourMs != swept_hour_;
  if (minute != written_minute_) {
    const int fresh =
        write_history(executor_, params_.queues, read_counters(executor_, params_.queues), now, &problems);
    spdlog::debug("history writer: minute {}: {} samples new, the rest already taken", minute, fresh);
    written_minute_ = minute;
  }
  if (now / kHourMs != swept_hour_) {
    if (const std::int64_t gone = trim_history(executor_, params_.queues, now, &problems); gone > 0) {
      spdlog::debug("history writer: dropped {} samples past what is kept", gone);
    }
    swept_hour_ = now / kHourMs;
  }
  if (due) note(problems);
  ++rounds_;
  const std::int64_t to_next = kHistoryMinuteMs - now % kHistoryMinuteMs + kPastTheMinuteMs;
  return std::min(params_.max_wait, std::chrono::milliseconds(to_next));
}

}  // namespace echomq::daemon
