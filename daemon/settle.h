// From a handler's outcome to the transition that records it: complete,
// fail (retry after the queue's backoff, or dead), or release. The retry
// back-off is applied here, from the queue's `backoff` block.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "handlers/handler.h"

namespace echomq::daemon {

// An outcome on its way to the server.
struct Settlement {
  enum class Action { Complete, Fail, Release };

  Lease lease;
  Action action = Action::Complete;
  std::int64_t attempt = 1;
  std::string text;  // the result (Complete) or the error (Fail)
  bool permanent = false;
  std::string trace_id;  // the job's, for the lines logged as it settles; "" while tracing is off

  static Settlement from_outcome(const Lease& lease, std::int64_t attempt, Outcome outcome);
  static Settlement release(const Lease& lease, std::int64_t attempt);
};

// What the server made of a settlement.
enum class Settled { Completed, Retried, Dead, Released, LeaseLost };

class Settler {
 public:
  Settler(const QueueConfig& queue, const QueueKeys& keys);

  // mode: the queue's (meta's flows flag, read with the claims): the flow
  // twins tell a child's parent.
  ScriptCall call(const Settlement& s, FlowMode mode = FlowMode::Plain);
  // Throws echomq::Error when the server refused the call itself.
  static Settled decode(const Settlement& s, const Reply& reply);

  // The delay before the retry of a job that failed its attempt-th try.
  std::int64_t retry_delay_ms(std::int64_t attempt);

 private:
  const QueueConfig& queue_;
  const QueueKeys& keys_;
  std::mt19937_64 rng_;
};

const char* to_string(Settled s);

}  // namespace echomq::daemon
