// The queue page's lists that are not a set of the queue: the Completed
// tab (docs/web.md, "Completed"), read from the queue's events stream,
// newest first, so no index of completions is kept beside it; and the
// Retries tab, the delayed jobs that failed before, found by a bounded scan
// of the delayed set.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "echomq/jobs.h"
#include "web/api.h"

namespace echomq::cli {

// Completions shown per page, and stream entries read at most for one
// page: a stream of mostly other events ends a page early, with a cursor.
inline constexpr std::int64_t kCompletedPageSize = 100;
inline constexpr std::int64_t kCompletedScanEntries = 5000;

// GET /api/queues/Q/completed?before=ENTRY: the completions older than the
// entry id `before` ("" from the newest).
ApiAnswer completed_answer(Executor& x, const std::string& queue, const std::string& before);

// Delayed jobs read at most for one page of the Retries tab.
inline constexpr std::int64_t kRetriesScanEntries = 10000;

struct RetriesPage {
  JobPage page;              // total: the retries among the delayed jobs scanned
  std::int64_t scanned = 0;  // delayed jobs read
  std::int64_t delayed = 0;  // delayed jobs the set held
};

// The Retries tab: delayed jobs with failures > 0 (docs/decisions.md,
// issue 54), soonest retry first, `limit` of them from `offset`, with
// their rows read for a listing.
RetriesPage retries_page(Executor& x, const QueueKeys& q, std::int64_t offset, std::int64_t limit,
                         std::size_t preview_bytes);

}  // namespace echomq::cli
