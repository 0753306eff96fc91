// The page's "select and act" (docs/web.md, "Select and act"): Retry, Run
// now, Cancel or Delete on the jobs an operator ticked, POST
// /api/queues/Q/selection/ACTION?state=S&id=A&id=B... Each request is one
// bounded batch (at most kBulkBatch ids, one round trip of transitions,
// the same ones a single job's button and the bulk forms use); the page
// sends a selection larger than that in turn. A job that is no longer in
// the state the page listed it in is left alone and counted as moved on.
// The caller has checked the token, the origin and --read-only.
#pragma once

#include <string>
#include <vector>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

// action: retry (dead), run (delayed: to pending now), cancel (pending or
// delayed), delete (dead); state: the list the ids were ticked on.
ApiAnswer act_on_selection(Executor& x, const std::string& queue, const std::string& action, const std::string& state,
                           const std::vector<std::string>& ids);

}  // namespace echomq::cli
