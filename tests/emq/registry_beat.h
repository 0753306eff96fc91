// The fleet registry filled as daemons fill it, for the tests of emq and
// emq web that read it: a beat as emqd writes it (beat_commands), written
// to the server.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "echomq/daemons.h"
#include "echomq/executor.h"

namespace echomq::test {

// A running daemon of `host` serving `queue`, its busy slots the jobs given.
inline DaemonInfo daemon_beat(Executor& x, const std::string& host, const std::string& queue,
                              std::vector<DaemonJob> jobs = {}) {
  DaemonInfo b;
  b.id = new_daemon_id(host, 4242);
  b.host = host;
  b.pid = 4242;
  b.version = "0.1.0";
  b.started_ms = x.server_time_ms() - 60000;
  b.state = "running";
  b.queues = {queue};
  b.slots = 4;
  b.busy = static_cast<std::int64_t>(jobs.size());
  b.executor = "scripted";
  b.jobs = std::move(jobs);
  return b;
}

// Writes the beat now, as a daemon beating every beat_ms would.
inline void write_beat(Executor& x, const DaemonInfo& b, std::int64_t beat_ms = 5000) {
  for (const Reply& r : x.pipeline(beat_commands(b, x.server_time_ms(), beat_ms, 100))) {
    ASSERT_FALSE(r.is_error()) << r.str;
  }
}

}  // namespace echomq::test
