#include "process/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace echomq::daemon {
namespace {

// The child runs on a stack of its own until it execs, as with
// posix_spawn, but the stack is the spawning thread's to reuse: glibc's
// posix_spawn maps one per child and unmaps it after, and the unmap
// interrupts every core running one of the daemon's threads to flush its
// TLB; with the mapping, that was a tenth of emqd's own CPU per exec job.
// With CLONE_VFORK the thread sleeps until the child has exec'd, so one
// stack per thread is enough.
constexpr std::size_t kStackSize = 64 * 1024;  // the child calls a few wrappers and execve
constexpr std::size_t kGuardSize = 4096;       // below it, so an overflow faults

class ChildStack {
 public:
  ChildStack() {
    void* p = ::mmap(nullptr, kGuardSize + kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                     -1, 0);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap (a child's stack)");
    base_ = static_cast<char*>(p);
    ::mprotect(base_, kGuardSize, PROT_NONE);
  }
  ~ChildStack() { ::munmap(base_, kGuardSize + kStackSize); }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  void* top() const { return base_ + kGuardSize + kStackSize; }  // the stack grows down; mmap aligns it

 private:
  char* base_;
};

ChildStack& this_threads_stack() {
  thread_local ChildStack stack;
  return stack;
}

struct ChildArgs {
  const SpawnRequest* request;
  volatile int error;  // written by the child, which shares our memory
};

// In the child, sharing the daemon's memory until execve: only system
// calls, no allocation, no locks. Handlers go first, so that no signal
// unblocked below runs daemon code in the child.
// A descriptor bound for 3 or 4, first copied to 5 or above: moving it
// there must not overwrite a stdio source or the other one still to move.
int lift(int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD, 5); }

// The lifted copy onto `to`, which dup2 leaves without close-on-exec; or
// `to` closed when there is none.
bool place(int lifted, int to) {
  if (lifted < 0) {
    ::close(to);
    return true;
  }
  return ::dup2(lifted, to) >= 0;
}

int child_main(void* arg) {
  auto* args = static_cast<ChildArgs*>(arg);
  const SpawnRequest& r = *args->request;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    // SIGKILL and SIGSTOP cannot change, and glibc keeps its own two
    // (cancellation, setxid): those calls fail, harmlessly.
    ::sigaction(sig, &dfl, nullptr);
  }
  int failed_errno = 0;
  const int fd3 = lift(r.fd3);
  const int fd4 = lift(r.fd4);
  if ((r.fd3 >= 0 && fd3 < 0) || (r.fd4 >= 0 && fd4 < 0)) {
    failed_errno = errno;
  } else if (::setpgid(0, 0) != 0 || ::dup2(r.stdin_fd, 0) < 0 || ::dup2(r.stdout_fd, 1) < 0 ||
             ::dup2(r.stderr_fd, 2) < 0 || !place(fd3, 3) || !place(fd4, 4)) {
    failed_errno = errno;
  } else if (::close_range(5, ~0U, 0) != 0) {
    // Libraries' descriptors may lack close-on-exec (hiredis opens its
    // sockets without it): a child that would inherit them is not started.
    failed_errno = errno;
  } else if (r.cwd != nullptr && ::chdir(r.cwd) != 0) {
    failed_errno = errno;
  } else {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(r.program, r.argv, r.envp);
    failed_errno = errno;
  }
  args->error = failed_errno;
  ::_exit(127);
}

// Blocks every signal in this thread while the child shares its memory,
// so that no handler runs in the child before it has reset them.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

Spawned spawn(const SpawnRequest& request) {
  ChildArgs args{&request, 0};
  void* stack = this_threads_stack().top();
  int pidfd = -1;
  pid_t pid;
  {
    const AllSignalsBlocked blocked;
    // CLONE_PIDFD hands back the exit descriptor in the same call; a
    // kernel older than 5.2 refuses the flag, and the child is made
    // without it.
    pid = ::clone(child_main, stack, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd);
    if (pid < 0 && errno == EINVAL) {
      pidfd = -1;
      pid = ::clone(child_main, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &args, nullptr);
    }
  }
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "clone");
  Spawned out;
  out.pid = pid;
  out.exit_fd.reset(pidfd);
  out.error = args.error;
  if (out.error != 0) {
    // It has exited 127 without running anything: reap it here.
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    out.exit_fd.reset();
  }
  return out;
}

}  // namespace echomq::daemon
