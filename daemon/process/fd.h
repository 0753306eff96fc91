// Owned file descriptors: closed by the destructor, created close-on-exec,
// so no child ever inherits one it was not handed on purpose.
#pragma once

#include <utility>

namespace echomq::daemon {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

// pipe2(O_CLOEXEC); throws std::system_error.
Pipe make_pipe();
// Sets O_NONBLOCK on a fresh pipe end (its only status flag after this);
// throws std::system_error.
void set_nonblocking(int fd);

}  // namespace echomq::daemon
