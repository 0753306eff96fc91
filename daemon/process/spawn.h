// Starting a child: the system call and what the child does before it
// becomes the program. The child leads a new process group, has the three
// given descriptors as stdin, stdout and stderr (and, when given, 3 and 4)
// and no others, default
// signal dispositions, an empty signal mask, the given environment and
// working directory: what posix_spawn with those attributes gives, at a
// lower cost per child (spawn.cpp says where).
#pragma once

#include <sys/types.h>

#include "process/fd.h"

namespace echomq::daemon {

struct SpawnRequest {
  const char* program;  // a path: no PATH lookup here
  char* const* argv;
  char* const* envp;
  int stdin_fd;  // become 0, 1, 2 in the child; each must be above 2
  int stdout_fd;
  int stderr_fd;
  const char* cwd;  // nullptr: the daemon's
  // Become 3 and 4 in the child, inherited across exec (an exec handler's
  // progress pipe and a flow parent's children file); -1: that one closed.
  int fd3 = -1;
  int fd4 = -1;
};

struct Spawned {
  pid_t pid = -1;
  // Readable once the child has exited; empty where the kernel gives none.
  Fd exit_fd;
  // The errno of the step that failed in the child (chdir, exec, ...),
  // which has then exited 127 and been reaped; 0 when the program runs.
  int error = 0;
};

// Throws std::system_error when no child could be created (out of
// processes or memory).
Spawned spawn(const SpawnRequest& request);

}  // namespace echomq::daemon
