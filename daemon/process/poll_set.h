// The descriptors one poll() waits on, each found again by the index
// watch() handed out: a handler's pipes, its pidfd and its stop token.
#pragma once

#include <poll.h>

#include <array>

namespace echomq::daemon {

class PollSet {
 public:
  // Adds fd for events; a negative fd is not watched and gets index -1.
  int watch(int fd, short events) {
    if (fd < 0) return -1;
    fds_[n_] = pollfd{fd, events, 0};
    return static_cast<int>(n_++);
  }
  // ::poll over what is watched: its result, with errno set on -1.
  int wait(int timeout_ms) { return ::poll(fds_.data(), n_, timeout_ms); }
  // Whether the descriptor at index saw any of events (never, for -1).
  bool ready(int index, short events) const { return index >= 0 && (fds_[index].revents & events) != 0; }

 private:
  std::array<pollfd, 8> fds_{};
  nfds_t n_ = 0;
};

}  // namespace echomq::daemon
