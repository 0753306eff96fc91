#include "handlers/stop_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace echomq::daemon {

int StopToken::fd() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fd_) {
    // Created after the stop was requested, it starts readable.
    Fd made(::eventfd(requested() ? 1 : 0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!made) throw std::system_error(errno, std::generic_category(), "eventfd for a job's stop token");
    fd_ = std::move(made);
  }
  return fd_.get();
}

void StopToken::request() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (requested_.exchange(true, std::memory_order_acq_rel)) return;
  if (!fd_) return;
  std::uint64_t one = 1;
  // The eventfd stays readable from now on: nobody reads it.
  [[maybe_unused]] ssize_t n = ::write(fd_.get(), &one, sizeof one);
}

}  // namespace echomq::daemon
