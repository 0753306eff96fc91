// One fire of a published schedule now, through the wire's enqueue_cron
// (marked with the server's time): what `emq schedules fire` and the page's
// "Fire now" both do, so the two answer alike.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq::cli {

struct FireOutcome {
  enum class Kind {
    Fired,        // job_id holds the job enqueued
    NoSchedule,   // nothing is published under the name
    Broken,       // the published definition does not read: problem says why
    Skipped,      // overlap is skip and the last fire's job is unfinished
    MarkerAhead,  // the marker already holds a fire at or after now
    KeyHeld,      // its unique key is held: job_id is the holder, problem its state
  };
  Kind kind = Kind::Fired;
  std::string job_id;
  std::string problem;
};

FireOutcome fire_schedule(Executor& x, const QueueKeys& q, const std::string& name, const std::string& payload);

}  // namespace echomq::cli
