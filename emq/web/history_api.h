// GET /api/history?queue=Q&range=1h|24h|30d|90d (docs/web.md, "History"):
// what one queue (or, without a queue, every queue summed) did per minute
// or per day, read from the samples emqd writes (history.h). The interval
// now under way counts up to the counters as they stand.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

// queue "" sums every queue of {emq}:queues; range "" is 24h.
ApiAnswer history_answer(Executor& x, const std::string& queue, const std::string& range);

// Minutes the overview's per-queue chart shows, the one under way included.
inline constexpr std::int64_t kRecentMinutes = 10;

// GET /api/history/recent: every queue's last kRecentMinutes minutes, each
// queue apart (the overview's charts and its completed/min), one pipeline
// for every queue as /api/history's.
ApiAnswer recent_history_answer(Executor& x);

}  // namespace echomq::cli
