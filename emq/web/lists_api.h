// The queue page's lists that are not a set of the queue: the Completed
// tab (docs/web.md, "Completed"), read from the queue's events stream,
// newest first, so no index of completions is kept beside it.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

// Completions shown per page, and stream entries read at most for one
// page: a stream of mostly other events ends a page early, with a cursor.
inline constexpr std::int64_t kCompletedPageSize = 100;
inline constexpr std::int64_t kCompletedScanEntries = 5000;

// GET /api/queues/Q/completed?before=ENTRY: the completions older than the
// entry id `before` ("" from the newest).
ApiAnswer completed_answer(Executor& x, const std::string& queue, const std::string& before);

}  // namespace echomq::cli
