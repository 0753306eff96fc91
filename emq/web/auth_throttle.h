// Wrong passwords to `emq web`, per client address: after each one the
// client waits longer before its next attempt is even checked (none after
// the first, then 100 ms, doubling to at most 30 s; forgotten after 15
// quiet minutes or the right password), so a guesser gets a handful of
// tries a minute, however many connections it opens. The failures are
// logged without the password, at most one line a minute: the first of a
// quiet spell at once, the rest counted into the next line (or a last one
// when emq web stops).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>

namespace echomq::cli {

class AuthThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirstWait{100};
  static constexpr std::chrono::milliseconds kLongestWait{30000};
  static constexpr std::chrono::minutes kForgetAfter{15};
  static constexpr std::chrono::seconds kLogEvery{60};
  // Clients remembered at once; past it the longest quiet is forgotten.
  static constexpr std::size_t kMaxClients = 10000;

  // How long `client` must still wait before an attempt of its is checked;
  // zero when it may try now. A refused attempt is counted for the log.
  std::chrono::milliseconds wait(const std::string& client, Clock::time_point now);
  AuthThrottle() = default;
  // Logs what was counted and not yet said.
  ~AuthThrottle();
  AuthThrottle(const AuthThrottle&) = delete;
  AuthThrottle& operator=(const AuthThrottle&) = delete;

  // A wrong password (or malformed credentials) from `client`.
  void failed(const std::string& client, Clock::time_point now);
  // The right password: the client starts afresh.
  void passed(const std::string& client);

 private:
  struct Client {
    int failures = 0;
    Clock::time_point until;  // no attempt is checked before it
    Clock::time_point last;   // the last failure
  };
  Client& remember(const std::string& client, Clock::time_point now);
  void log_counted(Clock::time_point now);

  std::map<std::string, Client> clients_;
  bool logged_once_ = false;
  Clock::time_point last_log_;
  std::size_t unlogged_failures_ = 0;
  std::size_t unlogged_refusals_ = 0;
  std::set<std::string> unlogged_clients_;
  std::string latest_;  // the last failure's client and its count, for the log
};

}  // namespace echomq::cli
