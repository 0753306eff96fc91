#include "echomq/parent_results.h"

#include "script_replies.h"

namespace echomq {

std::vector<std::vector<ChildResult>> read_parent_results(Executor& x, const QueueKeys& q,
                                                          const std::vector<ClaimedJob>& jobs) {
  std::vector<std::vector<ChildResult>> out(jobs.size());
  if (jobs.empty()) return out;
  std::vector<Command> marks;
  marks.reserve(jobs.size());
  for (const ClaimedJob& j : jobs) marks.push_back({"HEXISTS", q.row(j.id), "children"});
  std::vector<Reply> is_parent = x.pipeline(marks);
  std::vector<Command> reads;
  std::vector<std::size_t> parents;  // index in jobs of each read
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (integer_of(is_parent[i], "children") != 1) continue;
    reads.push_back(results_read(q, jobs[i].id));
    parents.push_back(i);
  }
  if (reads.empty()) return out;
  std::vector<Reply> results = x.pipeline(reads);
  for (std::size_t k = 0; k < parents.size(); ++k) out[parents[k]] = decode_results(results[k]);
  return out;
}

}  // namespace echomq
