// GET /api/events?queue=Q of `emq web`: the queue's events stream as
// server-sent events, one XREAD BLOCK per page connection (not per browser
// poll), so the queue and job pages update as jobs move. A queue that keeps
// no events gets one `off` event and the end of the stream: its page polls.
#pragma once

#include <string>
#include <vector>

#include "echomq/url.h"
#include "http/http_server.h"

namespace echomq::cli {

// The most event streams served at once; past it, 503 (the page polls).
inline constexpr int kMaxEventStreams = 64;

daemon::HttpResponse events_response(const ConnectionOptions& server, const std::string& queue);

// GET /api/events/overview?queue=A&queue=B...: the overview's one stream
// (a browser opens ~6 connections per host, so not one per queue), served
// by one reader per queue writing to it: `ready` or `off` per queue, then
// `job` entries naming their queue. At most kMaxOverviewQueues per stream
// (the page polls the rest), kMaxOverviewReaders across streams (503).
inline constexpr int kMaxOverviewQueues = 64;
inline constexpr int kMaxOverviewReaders = 256;
daemon::HttpResponse overview_events_response(const ConnectionOptions& server, const std::vector<std::string>& queues);

}  // namespace echomq::cli
