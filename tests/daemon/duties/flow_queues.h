// The flow of the duties' tests, as one daemon runs both its queues:
// parents in "reports", their children in "pages".
#pragma once

#include <string>

#include "config/config_types.h"
#include "echomq/flows.h"

namespace echomq::test {

inline daemon::Config reports_and_pages() {
  daemon::Config c;
  for (const std::string name : {"reports", "pages"}) {
    daemon::QueueConfig q;
    q.name = name;
    c.queues.push_back(q);
  }
  return c;
}

// A parent in "reports" waiting on `children` children in "pages"; given
// the ids of an earlier call, the same tree again.
inline FlowJob report_with_pages(Executor& x, int children, const FlowJob* again = nullptr) {
  FlowNode root{"reports", "report", 0, "fail", again ? again->id : "", {}};
  for (int i = 0; i < children; ++i) {
    root.children.push_back(FlowNode{"pages", "page", 0, "fail", again ? again->children.at(i).id : "", {}});
  }
  return enqueue_flow(x, root);
}

}  // namespace echomq::test
