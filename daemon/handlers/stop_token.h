// A one-way "stop now" flag a running handler can poll() on: the daemon
// sets it when a job's lease is lost or the drain timeout has passed.
#pragma once

#include <atomic>

#include "process/fd.h"

namespace echomq::daemon {

class StopToken {
 public:
  StopToken();  // an eventfd; throws std::system_error
  void request() noexcept;
  bool requested() const noexcept { return requested_.load(std::memory_order_acquire); }
  // Readable once requested; for poll() next to a handler's own fds.
  int fd() const noexcept { return fd_.get(); }

 private:
  Fd fd_;
  std::atomic<bool> requested_{false};
};

}  // namespace echomq::daemon
