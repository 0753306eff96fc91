// A daemon's own wall clock moved by EMQ_TEST_CLOCK_OFFSET_S seconds (signed),
// loaded into emqd with LD_PRELOAD by the schedule tests: a daemon whose
// clock is an hour off must still fire the server's ticks.
//
// Not libfaketime: Debian's 0.9.10 deadlocks emqd at start. emqd links
// jemalloc, whose first malloc (from libstdc++'s start, before libfaketime's
// constructor) reads the clock holding a jemalloc lock; libfaketime then
// initialises, a dlsym of a symbol glibc no longer has fails, and the failure
// message is malloc'd: the same lock again. So this reads the clock through
// the raw syscall, with no dlsym and no malloc, and nothing can recurse.
//
// Only the wall clock moves (CLOCK_REALTIME and its coarse twin, and
// gettimeofday and time, read from it): the monotonic clocks that time
// waits and leases stay true, as they would on a host whose clock is wrong.
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

// The offset, parsed by hand: nothing here calls into libc beyond getenv
// and syscall, which read no clock and allocate nothing.
static long long offset_s(void) {
  const char* s = getenv("EMQ_TEST_CLOCK_OFFSET_S");
  if (s == NULL) return 0;
  long long sign = 1, value = 0;
  if (*s == '-' || *s == '+') sign = (*s++ == '-') ? -1 : 1;
  for (; *s >= '0' && *s <= '9'; ++s) value = value * 10 + (*s - '0');
  return sign * value;
}

static int real_clock_gettime(clockid_t clock, struct timespec* tp) {
  return (int)syscall(SYS_clock_gettime, clock, tp);
}

int clock_gettime(clockid_t clock, struct timespec* tp) {
  int rc = real_clock_gettime(clock, tp);
  if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) tp->tv_sec += offset_s();
  return rc;
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  (void)tz;
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
