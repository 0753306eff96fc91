#include "process/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace echomq::daemon {

void Fd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

void set_nonblocking(int fd) {
  // One F_SETFL, no F_GETFL: every caller passes a pipe end fresh from
  // pipe2, which has no status flags to keep (F_SETFL leaves the access
  // mode alone), and exec does this three times per job.
  if (::fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
    throw std::system_error(errno, std::generic_category(), "fcntl O_NONBLOCK");
  }
}

}  // namespace echomq::daemon
