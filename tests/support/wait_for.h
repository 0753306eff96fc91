// Waiting on a condition with a deadline: the only way tests wait.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace echomq::test {

// Polls cond every few milliseconds until it holds or the deadline passes.
// Returns whether it held.
inline bool wait_for(const std::function<bool()>& cond, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  auto step = std::chrono::milliseconds(1);
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= until) return cond();
    std::this_thread::sleep_for(step);
    if (step < std::chrono::milliseconds(20)) step *= 2;
  }
}

}  // namespace echomq::test
