// Signals, the usbguard way: blocked in every thread before any starts, then
// taken synchronously in one place, so no handler runs at a random point.
#pragma once

#include <chrono>
#include <optional>

namespace echomq::daemon {

enum class Signal { Stop, Reload };

// Blocks SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 in the calling thread (and so in every
// thread it starts afterwards), and ignores SIGPIPE: a handler that closes
// its stdin early is an EPIPE to handle, not a reason to die.
void block_signals();
// Waits up to `wait` for one of them. SIGUSR1 and SIGUSR2 are logged and
// answered with nullopt, as a timeout is.
std::optional<Signal> wait_signal(std::chrono::milliseconds wait);

}  // namespace echomq::daemon
