#include "process/sigpipe_block.h"

#include <pthread.h>
#include <time.h>

namespace echomq::daemon {
namespace {

sigset_t sigpipe_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

SigpipeBlock::SigpipeBlock() noexcept {
  // Ignored process-wide (the daemon's case): a write to a closed pipe
  // already fails with EPIPE and raises nothing. One call instead of the
  // four that blocking and restoring take, on every exec job.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
    active_ = false;
    return;
  }
  const sigset_t set = sigpipe_set();
  ::pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  was_blocked_ = sigismember(&old_mask_, SIGPIPE) == 1;
  was_pending_ = sigpipe_pending();
}

SigpipeBlock::~SigpipeBlock() {
  if (!active_ || was_blocked_) return;  // someone above us blocks it: theirs to handle
  if (!was_pending_ && sigpipe_pending()) {
    const sigset_t set = sigpipe_set();
    const timespec zero{0, 0};
    ::sigtimedwait(&set, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace echomq::daemon
