// Outbox entries whose parent could not be told: child_done refused them
// (the parent's row is broken, e.g. an on_child_failure no transition
// writes). A parent is reported once, however many of its children wait;
// each entry is retried after a delay that doubles from kFirstRetry to
// kLastRetry, so that one broken parent costs a server call now and then,
// not one per drainer round, until an operator mends or cancels it. Per
// entry: the others drain at full speed.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace echomq::daemon {

class StuckNews {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirstRetry{1000};
  static constexpr std::chrono::milliseconds kLastRetry{30000};

  // True while the entry waits out its delay: leave it out of this round.
  bool holding(std::size_t queue, const std::string& id, Clock::time_point now) const;
  // child_done refused it (again); true when its parent (a ref) was not
  // refusing any other entry held here: report it then.
  bool refused(std::size_t queue, const std::string& id, const std::string& parent, Clock::time_point now);
  // Its parent was told at last; true when it had been refused.
  bool told(std::size_t queue, const std::string& id);
  // How many entries of the queue are known stuck: a reader reads that many
  // more, so that stuck entries at the head never hide the rest.
  std::size_t count(std::size_t queue) const;
  // The queue's whole outbox was read: entries not in it (acknowledged by
  // another daemon, or cancelled) are forgotten.
  void keep_only(std::size_t queue, const std::set<std::string>& present);

 private:
  struct Entry {
    Clock::time_point next;
    std::chrono::milliseconds delay;
    std::string parent;
  };
  using Entries = std::map<std::pair<std::size_t, std::string>, Entry>;
  Entries::iterator forget(Entries::iterator it);

  Entries entries_;
  std::map<std::string, std::size_t> parents_;  // parent ref -> entries held for it
};

}  // namespace echomq::daemon
