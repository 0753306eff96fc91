// Asking daemons to quiet or stop through the fleet registry, and waiting
// for each one's answer: its `ack` of the signal, written by its beat at
// or after the moment the signal was sent (PROTOCOL.md, "Daemons").
// `emq daemons quiet|stop` waits here; the page waits the same way by
// reading /api/daemons.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/daemons.h"
#include "echomq/executor.h"

namespace echomq::cli {

struct DaemonAnswer {
  std::string id;
  bool sent = false;               // false: it was gone before the signal went out
  bool answered = false;           // its ack came, or it left the registry after a stop
  bool left = false;               // its hash is gone (after a stop: drained and left)
  std::optional<DaemonInfo> last;  // the hash as last read
  std::int64_t waited_ms = 0;      // from sending to the answer (or the deadline)
};

// Whether ack answers a request of `signal` sent at sent_ms: the same
// signal, or a stop for a quiet (a stop is a quiet and more), acted on at
// or after sent_ms.
bool answers(const std::optional<DaemonAck>& ack, std::string_view signal, std::int64_t sent_ms);

// Sends signal to each daemon, then reads them every 50 ms until each has
// answered or its deadline passed: timeout when given, else two of its
// beats (read from its hash's expiry) and 5 s more.
std::vector<DaemonAnswer> signal_and_wait(Executor& x, const std::vector<DaemonInfo>& to, std::string_view signal,
                                          std::optional<std::chrono::milliseconds> timeout);

}  // namespace echomq::cli
