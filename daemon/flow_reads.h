// What a queue's part in flows asks of its claim loop (PROTOCOL.md,
// "Flows"): meta's flows flag, read behind each claim until it says 1
// (then jobs settle through the flow transitions), and meta's parents
// flag, likewise (then claimed jobs are looked at for children's results,
// so a queue of leaves reads none). Neither flag is ever cleared, so each
// is learnt once. Thread-safe: both channels of a claim loop learn and read.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "echomq/claim_meta.h"
#include "echomq/executor.h"
#include "echomq/flow_speaker.h"
#include "echomq/keyspace.h"

namespace echomq::daemon {

class FlowReads {
 public:
  FlowReads(const std::string& queue, const QueueKeys& keys) : queue_(queue), keys_(keys) {}

  // How this queue's outcomes settle.
  FlowMode mode() const { return flows_ ? FlowMode::Flow : FlowMode::Plain; }
  // From meta as read behind a claim; logs the day the queue joins flows.
  void learn(const ClaimMeta& meta);

  // Claimed jobs and their children's results, one list per job.
  struct Claimed {
    std::vector<std::vector<ChildResult>> children;
    // The results could not be read: the jobs go back at once, since a
    // parent must not run without them.
    bool give_back = false;
  };
  // Reads nothing until the parents flag is learnt, or for no jobs.
  Claimed children_of(Executor& x, const std::vector<ClaimedJob>& jobs) const;

 private:
  const std::string& queue_;
  const QueueKeys& keys_;
  std::atomic<bool> flows_{false};
  std::atomic<bool> parents_{false};
};

}  // namespace echomq::daemon
