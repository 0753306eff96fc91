// The history writer: once a minute, at the start of the server's minute
// (TIME, the clock every daemon shares), each served queue's cumulative
// counters become the sample of that minute and of that day (history.h).
// Every daemon runs one and none leads: HSETNX makes the first write of an
// interval the only one. Once an hour it also drops what is older than a
// day of minutes and 90 days of days, so a queue's history stays bounded.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "metrics.h"
#include "duties/periodic.h"

namespace echomq::daemon {

class HistoryWriter : public Periodic {
 public:
  struct Params {
    std::vector<std::string> queues;
    // The clock intervals are numbered by, in epoch ms: the server's TIME
    // when unset; a test sets its own so that it need not wait a minute.
    std::function<std::int64_t()> now_ms;
    // The longest wait between rounds; a round also comes just after each
    // minute starts.
    std::chrono::milliseconds max_wait{60'000};
  };

  HistoryWriter(Params params, const ConnectionOptions& server, Metrics* metrics = nullptr,
                ReconnectPolicy reconnect = {});
  ~HistoryWriter() override;

  // Rounds finished (samples written or found taken): what tests wait on.
  std::int64_t rounds() const { return rounds_.load(); }

 protected:
  std::chrono::milliseconds tick() override;

 private:
  void note(const std::vector<std::string>& problems);

  Params params_;
  Executor executor_;
  std::int64_t written_minute_ = -1;  // tick() only: the last minute sampled
  std::int64_t swept_hour_ = -1;      // tick() only: the last hour trimmed
  std::string problems_;              // tick() only: the broken keys last said
  std::atomic<std::int64_t> rounds_{0};
};

}  // namespace echomq::daemon
