#include "duties/stuck_news.h"

#include <algorithm>

namespace echomq::daemon {

bool StuckNews::holding(std::size_t queue, const std::string& id, Clock::time_point now) const {
  auto it = entries_.find({queue, id});
  return it != entries_.end() && now < it->second.next;
}

bool StuckNews::refused(std::size_t queue, const std::string& id, const std::string& parent, Clock::time_point now) {
  auto [it, first] = entries_.try_emplace({queue, id}, Entry{now + kFirstRetry, kFirstRetry, parent});
  if (!first) {
    it->second.delay = std::min(it->second.delay * 2, kLastRetry);
    it->second.next = now + it->second.delay;
    return false;
  }
  return ++parents_[parent] == 1;
}

bool StuckNews::told(std::size_t queue, const std::string& id) {
  auto it = entries_.find({queue, id});
  if (it == entries_.end()) return false;
  forget(it);
  return true;
}

StuckNews::Entries::iterator StuckNews::forget(Entries::iterator it) {
  auto p = parents_.find(it->second.parent);
  if (p != parents_.end() && --p->second == 0) parents_.erase(p);
  return entries_.erase(it);
}

std::size_t StuckNews::count(std::size_t queue) const {
  auto from = entries_.lower_bound({queue, std::string()});
  auto to = entries_.lower_bound({queue + 1, std::string()});
  return static_cast<std::size_t>(std::distance(from, to));
}

void StuckNews::keep_only(std::size_t queue, const std::set<std::string>& present) {
  auto it = entries_.lower_bound({queue, std::string()});
  while (it != entries_.end() && it->first.first == queue) {
    it = present.count(it->first.second) ? std::next(it) : forget(it);
  }
}

}  // namespace echomq::daemon
