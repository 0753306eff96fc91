// The stop token opens its eventfd only when a handler asks for it; either
// order of fd() and request() must leave the fd readable once stopped.
#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

#include "handlers/stop_token.h"

using echomq::daemon::StopToken;

namespace {
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}
}  // namespace

TEST(StopToken, FdIsQuietUntilAStopIsRequested) {
  StopToken stop;
  const int fd = stop.fd();
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(readable(fd));
  EXPECT_FALSE(stop.requested());
  stop.request();
  EXPECT_TRUE(stop.requested());
  EXPECT_TRUE(readable(fd));
  EXPECT_EQ(stop.fd(), fd) << "one eventfd per token";
}

TEST(StopToken, FdAskedForAfterTheRequestIsReadableAtOnce) {
  StopToken stop;
  stop.request();
  stop.request();  // a second request changes nothing
  EXPECT_TRUE(readable(stop.fd()));
}

TEST(StopToken, ARequestFromAnotherThreadWakesAPoller) {
  StopToken stop;
  pollfd p{stop.fd(), POLLIN, 0};
  std::thread stopper([&] { stop.request(); });
  const int n = ::poll(&p, 1, 10000);
  stopper.join();
  EXPECT_EQ(n, 1);
}
