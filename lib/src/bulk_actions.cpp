#include "echomq/bulk_actions.h"

#include <algorithm>

#include "echomq/errors.h"
#include "echomq/job_actions.h"
#include "echomq/transitions.h"

namespace echomq {

namespace {
// Calls act(slice) for each kBulkBatch ids in turn.
template <typename Act>
void in_batches(const std::vector<std::string>& ids, Act act) {
  for (std::size_t start = 0; start < ids.size(); start += kBulkBatch) {
    const std::size_t end = std::min(ids.size(), start + kBulkBatch);
    act(std::vector<std::string>(ids.begin() + static_cast<std::ptrdiff_t>(start),
                                 ids.begin() + static_cast<std::ptrdiff_t>(end)));
  }
}

// Those of batch still in set now.
std::vector<std::string> still_in(Executor& x, const std::string& set, const std::vector<std::string>& batch) {
  std::vector<Command> checks;
  for (const std::string& id : batch) checks.push_back({"ZSCORE", set, id});
  std::vector<Reply> scores = x.pipeline(checks);
  std::vector<std::string> here;
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (scores[k].is_error()) throw error_from_reply("bulk cancel", scores[k].str);
    if (scores[k].type == Reply::Type::String) here.push_back(batch[k]);
  }
  return here;
}
}  // namespace

BulkResult retry_found(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids) {
  BulkResult out;
  in_batches(ids, [&](const std::vector<std::string>& batch) {
    for (RetryJobResult r : retry_jobs(x, q, batch)) {
      ++(r == RetryJobResult::Moved ? out.done : r == RetryJobResult::KeyHeld ? out.held : out.changed);
    }
  });
  return out;
}

BulkResult cancel_found(Executor& x, const QueueKeys& q, JobState state, const std::vector<std::string>& ids) {
  if (state != JobState::Pending && state != JobState::Delayed) {
    throw Error(ErrorKind::Invalid, "bulk cancel",
                std::string("cancelling every ") + to_string(state) +
                    " job found is not offered: cancel pending or delayed jobs (dead ones: emq dead delete)");
  }
  BulkResult out;
  in_batches(ids, [&](const std::vector<std::string>& batch) {
    // Between this check and the cancel a job can still be claimed: cancel
    // then refuses it (active), and it is counted as changed all the same.
    const std::vector<std::string> here = still_in(x, set_key(q, state), batch);
    out.changed += static_cast<std::int64_t>(batch.size() - here.size());
    for (CancelResult r : cancel_jobs(x, q, here, FlowMode::Flow))
      ++(r == CancelResult::Removed ? out.done : out.changed);
  });
  return out;
}

}  // namespace echomq
