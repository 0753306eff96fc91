#include "duties/stuck_news.h"

#include <algorithm>

namespace echomq::daemon {

bool StuckNews::holding(std::size_t queue, const std::string& id, Clock::time_point now) const {
  auto it = entries_.find({queue, id});
  return it != entries_.end() && now < it->second.next;
}

bool StuckNews::refused(std::size_t queue, const std::string& id, Clock::time_point now) {
  auto [it, first] = entries_.try_emplace({queue, id}, Entry{now + kFirstRetry, kFirstRetry});
  if (!first) {
    it->second.delay = std::min(it->second.delay * 2, kLastRetry);
    it->second.next = now + it->second.delay;
  }
  return first;
}

bool StuckNews::told(std::size_t queue, const std::string& id) { return entries_.erase({queue, id}) > 0; }

std::size_t StuckNews::count(std::size_t queue) const {
  auto from = entries_.lower_bound({queue, std::string()});
  auto to = entries_.lower_bound({queue + 1, std::string()});
  return static_cast<std::size_t>(std::distance(from, to));
}

void StuckNews::keep_only(std::size_t queue, const std::set<std::string>& present) {
  auto it = entries_.lower_bound({queue, std::string()});
  while (it != entries_.end() && it->first.first == queue) {
    it = present.count(it->first.second) ? std::next(it) : entries_.erase(it);
  }
}

}  // namespace echomq::daemon
