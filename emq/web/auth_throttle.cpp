#include "web/auth_throttle.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace echomq::cli {

namespace {

using std::chrono::milliseconds;

// None after the first failure (a typo costs nothing), then doubling.
milliseconds wait_after(int failures) {
  if (failures <= 1) return milliseconds(0);
  const int doublings = std::min(failures - 2, 20);
  return std::min(AuthThrottle::kFirstWait * (1 << doublings), AuthThrottle::kLongestWait);
}

std::string shown(milliseconds ms) {
  if (ms.count() == 0) return "nothing";
  return ms < std::chrono::seconds(1) ? std::to_string(ms.count()) + " ms"
                                      : std::to_string((ms.count() + 999) / 1000) + " s";
}

}  // namespace

milliseconds AuthThrottle::wait(const std::string& client, Clock::time_point now) {
  auto it = clients_.find(client);
  if (it == clients_.end() || now >= it->second.until) return milliseconds(0);
  ++unlogged_refusals_;
  return std::chrono::ceil<milliseconds>(it->second.until - now);
}

void AuthThrottle::failed(const std::string& client, Clock::time_point now) {
  Client& c = remember(client, now);
  if (now - c.last >= kForgetAfter) c.failures = 0;
  ++c.failures;
  c.last = now;
  c.until = now + wait_after(c.failures);
  ++unlogged_failures_;
  unlogged_clients_.insert(client.substr(0, 64));
  latest_ = client + " (" + std::to_string(c.failures) + " in a row; its next attempt waits " +
            shown(wait_after(c.failures)) + ")";
  if (!logged_once_ || now - last_log_ >= kLogEvery) log_counted(now);
}

AuthThrottle::~AuthThrottle() {
  if (unlogged_failures_ > 0 || unlogged_refusals_ > 0) log_counted(Clock::now());
}

void AuthThrottle::passed(const std::string& client) { clients_.erase(client); }

AuthThrottle::Client& AuthThrottle::remember(const std::string& client, Clock::time_point now) {
  if (clients_.size() >= kMaxClients && clients_.find(client) == clients_.end()) {
    auto quietest = std::min_element(clients_.begin(), clients_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
    clients_.erase(quietest);
  }
  auto [it, fresh] = clients_.try_emplace(client);
  if (fresh) it->second.last = now;
  return it->second;
}

void AuthThrottle::log_counted(Clock::time_point now) {
  if (unlogged_failures_ == 1 && unlogged_refusals_ == 0) {
    spdlog::warn("emq web: a wrong password from {}", latest_);
  } else {
    spdlog::warn(
        "emq web: {} wrong passwords from {} client(s), and {} attempts refused unchecked while their "
        "client waited, since the last such line; the latest from {}",
        unlogged_failures_, unlogged_clients_.size(), unlogged_refusals_, latest_);
  }
  logged_once_ = true;
  last_log_ = now;
  unlogged_failures_ = 0;
  unlogged_refusals_ = 0;
  unlogged_clients_.clear();
}

}  // namespace echomq::cli
