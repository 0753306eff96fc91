// Writing to a pipe whose reader has gone raises SIGPIPE, whose default
// action ends the whole daemon. The daemon ignores it process-wide, but a
// pipe writer must not depend on that: while one of these lives, SIGPIPE
// is blocked in the calling thread (the kernel sends it to the writing
// thread), so write() just fails with EPIPE; one left pending by our own
// writes is consumed before the mask is restored.
#pragma once

#include <signal.h>

namespace echomq::daemon {

class SigpipeBlock {
 public:
  SigpipeBlock() noexcept;
  ~SigpipeBlock();
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_mask_;
  bool active_ = true;  // false: SIGPIPE is ignored, nothing was touched
  bool was_blocked_ = false;
  bool was_pending_ = false;
};

}  // namespace echomq::daemon
