#include "server_trouble.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace echomq::daemon {

void ServerTrouble::met(const Executor& x, const Error& e, Clock::time_point now, std::size_t unsent) {
  const std::string what = e.what();
  const bool refusal = e.kind() == ErrorKind::ReadOnly;
  on_cluster_ = on_cluster_ || x.cluster_map() != nullptr;
  const bool said_once = refusal || on_cluster_;
  const bool starts = count_++ == 0;
  if (starts) {
    since_ = now;
    delay_ = x.reconnect_policy().initial;
  } else {
    delay_ = std::min(delay_ * 2, x.reconnect_policy().max);
  }
  const std::chrono::milliseconds wait = std::max(x.retry_after(), delay_);
  if (starts || !said_once || (refusal && what != text_)) {
    spdlog::warn(
        "queue={} server trouble, {} outcomes kept for later, retry in {} ms{}: {}", queue_, unsent, wait.count(),
        said_once ? ", then less often up to every " + std::to_string(x.reconnect_policy().max.count()) + " ms" : "",
        what);
  }
  text_ = what;
  troubled_ = &x;
  backoff_until_ = now + wait;
}

bool ServerTrouble::over(const Executor& x) {
  on_cluster_ = on_cluster_ || x.cluster_map() != nullptr;
  if (count_ == 0) return false;
  spdlog::info("queue={} the server takes calls again, after {} failed attempts in {:.1f} s", queue_, count_,
               std::chrono::duration<double>(Clock::now() - since_).count());
  count_ = 0;
  text_.clear();
  return true;
}

}  // namespace echomq::daemon
