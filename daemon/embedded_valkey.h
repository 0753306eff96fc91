// valkey.url: embedded. A private valkey-server, started as our child on a
// unix socket in the state directory, with AOF on and no TCP port, and
// stopped when we stop. It lets a newcomer run everything with no server set
// up; production points emqd at a real server.
#pragma once

#include <sys/types.h>

#include <string>

#include "config/config_paths.h"
#include "echomq/url.h"
#include "process/fd.h"

namespace echomq::daemon {

class EmbeddedValkey {
 public:
  // Creates the directory if needed and takes its lock: a second emqd on
  // the same directory is refused with a clear error (std::runtime_error).
  explicit EmbeddedValkey(std::string state_dir);
  ~EmbeddedValkey();
  EmbeddedValkey(const EmbeddedValkey&) = delete;
  EmbeddedValkey& operator=(const EmbeddedValkey&) = delete;

  // Starts the server and waits until it answers (through LOADING).
  void start();
  // SIGTERM, so the server finishes its AOF, then wait for it.
  void stop();

  std::string socket_path() const { return embedded_socket_path(dir_); }
  ConnectionOptions options() const;

 private:
  std::string dir_;
  Fd lock_;
  pid_t pid_ = -1;
};

}  // namespace echomq::daemon
