// A one-way "stop now" flag a running handler can poll() on: the daemon
// sets it when a job's lease is lost or the drain timeout has passed.
#pragma once

#include <atomic>
#include <mutex>

#include "process/fd.h"

namespace echomq::daemon {

class StopToken {
 public:
  void request() noexcept;
  bool requested() const noexcept { return requested_.load(std::memory_order_acquire); }
  // Readable once requested; for poll() next to a handler's own fds. The
  // eventfd is opened on the first call, because plugin jobs never poll:
  // an eventfd and its close for every job were a tenth of the daemon's
  // CPU at no-op rates. Throws std::system_error when none can be opened.
  int fd() const;

 private:
  mutable std::mutex mutex_;  // orders the fd's creation against request()
  mutable Fd fd_;
  std::atomic<bool> requested_{false};
};

}  // namespace echomq::daemon
