#include "flow_reads.h"

#include <spdlog/spdlog.h>

#include "echomq/parent_results.h"

namespace echomq::daemon {

void FlowReads::learn(const ClaimMeta& meta) {
  if (meta.flows == FlowMode::Flow && !flows_.exchange(true)) {
    spdlog::info("queue={} takes part in flows: settling through the flow transitions", queue_);
  }
  if (meta.parents) parents_ = true;
}

FlowReads::Claimed FlowReads::children_of(Executor& x, const std::vector<ClaimedJob>& jobs) const {
  Claimed out;
  if (!parents_ || jobs.empty()) return out;
  try {
    out.children = read_parent_results(x, keys_, jobs);
  } catch (const Error& e) {
    spdlog::warn("queue={} giving back {} claimed jobs: their children's results could not be read: {}", queue_,
                 jobs.size(), e.what());
    out.give_back = true;
  }
  return out;
}

}  // namespace echomq::daemon
