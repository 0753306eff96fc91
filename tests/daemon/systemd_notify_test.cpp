// The systemd notify protocol through a real AF_UNIX datagram socket, bound
// where systemd would put it and named by NOTIFY_SOCKET, read back as
// systemd reads it: one datagram per message.
#include "systemd_notify.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "notify_socket.h"

namespace echomq::daemon {
namespace {

using std::chrono::milliseconds;
using test::NotifySocket;

TEST(SystemdNotify, EachMessageIsOneDatagramInTheProtocolsWords) {
  NotifySocket systemd;
  SystemdNotify notify;
  ASSERT_TRUE(notify.enabled());

  notify.ready("2 queues, 0 jobs in flight");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=2 queues, 0 jobs in flight");
  notify.status("2 queues, 3 jobs in flight");
  EXPECT_EQ(systemd.next(), "STATUS=2 queues, 3 jobs in flight");
  notify.watchdog();
  EXPECT_EQ(systemd.next(), "WATCHDOG=1");
  notify.stopping("draining: 2 queues, 3 jobs in flight");
  EXPECT_EQ(systemd.next(), "STOPPING=1\nSTATUS=draining: 2 queues, 3 jobs in flight");
  EXPECT_EQ(systemd.next(milliseconds(50)), std::nullopt) << "nothing more was sent";
}

TEST(SystemdNotify, AnAbstractSocketNameWorksToo) {
  NotifySocket systemd(/*abstract=*/true);
  SystemdNotify notify;
  notify.ready("up");
  EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=up");
}

TEST(SystemdNotify, TheWatchdogIntervalIsHalfWhatSystemdAsksForThisProcess) {
  NotifySocket systemd;
  ::setenv("WATCHDOG_USEC", "30000000", 1);  // WatchdogSec=30
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  EXPECT_EQ(SystemdNotify().watchdog_interval(), milliseconds(15000));

  ::unsetenv("WATCHDOG_PID");  // no PID: meant for whoever reads it
  EXPECT_EQ(SystemdNotify().watchdog_interval(), milliseconds(15000));

  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);  // another process's
  EXPECT_EQ(SystemdNotify().watchdog_interval(), std::nullopt);

  ::unsetenv("WATCHDOG_PID");
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(SystemdNotify().watchdog_interval(), std::nullopt) << "no WatchdogSec: no pings";
}

TEST(SystemdNotify, WithoutNotifySocketNothingIsSentAndNothingFails) {
  ::unsetenv("NOTIFY_SOCKET");
  SystemdNotify notify;
  EXPECT_FALSE(notify.enabled());
  notify.ready("up");
  notify.watchdog();
  notify.stopping("down");
}

}  // namespace
}  // namespace echomq::daemon
