// Waiting for jobs to end (PROTOCOL.md, "Events"). When the queue keeps
// events, a waiter reads the rows and the stream's last entry id in one
// MULTI, then blocks on XREAD from that id and reads a row again only when
// an entry says its job ended (or when the stream was trimmed past the
// waiter, which may have lost an entry): no loop of reads, and the row, not
// the stream, says how the job ended. Otherwise it polls the rows, quickly
// at first and backing off.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

struct JobEnd {
  enum class How { Completed, Dead, Gone, NotEnded };
  How how = How::NotEnded;
  std::string state;     // as last read ("" when the row is gone)
  std::string result;    // Completed, when the row keeps it
  std::string error;     // Dead: the last error
  std::string attempts;  // as last read
};

class Waiter {
 public:
  // Its own connection, which may block as long as a wait lasts.
  explicit Waiter(ConnectionOptions options);

  // Each job's end, in the order of ids; NotEnded for those still running
  // when timeout (none: as long as it takes; one past what the clock can
  // hold is none too) passed. A job whose row is gone when the wait starts
  // is Gone at once.
  std::vector<JobEnd> wait(const QueueKeys& q, const std::vector<std::string>& ids,
                           std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  // Whether the last wait went by the stream (false: it polled).
  bool used_events() const noexcept { return used_events_; }
  // Commands sent to the server by waits so far (any thread may ask).
  std::uint64_t commands() const noexcept { return commands_.load(); }

  // How long one XREAD blocks at most: past it, the rows are read once
  // again, so a speaker that did not pass the stream (events turned on or
  // off while the job ran) strands no waiter for longer.
  static constexpr std::chrono::milliseconds kRecheck{60000};

 private:
  struct Pending;
  bool read_ends(const QueueKeys& q, Pending& p, const std::vector<std::size_t>& which);
  void by_events(const QueueKeys& q, Pending& p, std::optional<std::chrono::steady_clock::time_point> until);
  void by_polling(const QueueKeys& q, Pending& p, std::optional<std::chrono::steady_clock::time_point> until);

  Executor x_;
  bool used_events_ = false;
  std::atomic<std::uint64_t> commands_{0};
};

// How a row read with HMGET state result error attempts ends a job, if it
// does (the row gone counts as Gone).
JobEnd job_end_of(const Reply& hmget);
Command job_end_read(const QueueKeys& q, const std::string& id);

}  // namespace echomq
