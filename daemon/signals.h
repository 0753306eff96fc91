// Signals, the usbguard way: blocked in every thread before any starts, then
// taken synchronously in one place, so no handler runs at a random point.
#pragma once

#include <chrono>

namespace echomq::daemon {

// Blocks SIGTERM, SIGINT, SIGTSTP, SIGHUP, SIGUSR1 and SIGUSR2 in the calling thread (and so in every
// thread it starts afterwards), and ignores SIGPIPE: a handler that closes
// its stdin early is an EPIPE to handle, not a reason to die.
void block_signals();
// Waits up to `wait` for one of them; true for SIGTERM or SIGINT (stop).
// SIGHUP, SIGUSR1 and SIGUSR2 are logged and answered with false, as a
// timeout is. Every phase (the start-up wait for the server, running, the
// drain) waits here, so each signal means the same thing in all of them,
// as docs/operations.md promises: a SIGHUP never stops emqd.
bool wait_stop_signal(std::chrono::milliseconds wait);
// SIGTSTP asks for a local quiet (stop claiming, stay up): wait_stop_signal
// takes it as a timeout and keeps it here; true once per SIGTSTP taken.
bool take_quiet_request();

}  // namespace echomq::daemon
