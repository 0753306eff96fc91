#include "handlers/stop_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace echomq::daemon {

StopToken::StopToken() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!fd_) throw std::system_error(errno, std::generic_category(), "eventfd");
}

void StopToken::request() noexcept {
  if (requested_.exchange(true, std::memory_order_acq_rel)) return;
  std::uint64_t one = 1;
  // The eventfd stays readable from now on: nobody reads it.
  [[maybe_unused]] ssize_t n = ::write(fd_.get(), &one, sizeof one);
}

}  // namespace echomq::daemon
