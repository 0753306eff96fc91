// GET /api/events?queue=Q of `emq web`: the queue's events stream as
// server-sent events, one XREAD BLOCK per page connection (not per browser
// poll), so the queue and job pages update as jobs move. A queue that keeps
// no events gets one `off` event and the end of the stream: its page polls.
#pragma once

#include <string>

#include "echomq/url.h"
#include "http/http_server.h"

namespace echomq::cli {

// The most event streams served at once; past it, 503 (the page polls).
inline constexpr int kMaxEventStreams = 64;

daemon::HttpResponse events_response(const ConnectionOptions& server, const std::string& queue);

}  // namespace echomq::cli
