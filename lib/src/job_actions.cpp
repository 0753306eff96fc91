#include "echomq/job_actions.h"

#include <algorithm>

#include "echomq/errors.h"

namespace echomq {

namespace {
// Runs make(id) for every id, kActionBatch calls per round trip, and decodes
// each reply in order.
template <typename Result, typename Make, typename Decode>
std::vector<Result> run_batched(Executor& x, const std::vector<std::string>& ids, Make make, Decode decode) {
  std::vector<Result> out;
  out.reserve(ids.size());
  std::vector<ScriptCall> calls;
  for (std::size_t start = 0; start < ids.size(); start += kActionBatch) {
    const std::size_t end = std::min(ids.size(), start + kActionBatch);
    calls.clear();
    for (std::size_t i = start; i < end; ++i) calls.push_back(make(ids[i]));
    for (const Reply& r : x.eval_batch(calls)) out.push_back(decode(r));
  }
  return out;
}
}  // namespace

RetryDeadResult retry_all_dead(Executor& x, const QueueKeys& q, std::int64_t limit) {
  std::int64_t left = limit > 0 ? limit : count_jobs(x, q, JobState::Dead);
  RetryDeadResult total;
  // Jobs left dead because their key is held stay first in the set (the
  // oldest deaths): each call looks past them to a slice of new ones, and
  // the last call's count is how many stayed.
  std::int64_t stuck = 0;
  while (left > 0) {
    const std::int64_t slice = std::min(left, kRetrySlice);
    const RetryDeadResult n = retry_dead(x, q, std::min(stuck + slice, kMaxRetryDeadLimit));
    total.moved += n.moved;
    stuck = n.skipped;
    left -= slice;
    if (n.moved == 0 && count_jobs(x, q, JobState::Dead) <= stuck) break;
  }
  total.skipped = stuck;
  return total;
}

std::vector<RetryJobResult> retry_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                                       std::vector<KeyHolder>* holders) {
  if (holders != nullptr) holders->assign(ids.size(), KeyHolder{});
  std::size_t at = 0;
  return run_batched<RetryJobResult>(
      x, ids, [&](const std::string& id) { return retry_job_call(q, id); },
      [&](const Reply& r) { return decode_retry_job(r, holders != nullptr ? &(*holders)[at++] : nullptr); });
}

std::vector<PromoteJobResult> promote_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids) {
  return run_batched<PromoteJobResult>(
      x, ids, [&](const std::string& id) { return promote_job_call(q, id); }, decode_promote_job);
}

std::vector<CancelResult> cancel_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                                      FlowMode mode) {
  return run_batched<CancelResult>(
      x, ids, [&](const std::string& id) { return cancel_call(q, id, mode); }, decode_cancel);
}

std::string cancel_refusal(Executor& x, const QueueKeys& q, std::string_view id) {
  const Reply row = x.command({"HMGET", q.row(id), "state", "parent"});
  const bool fields = row.type == Reply::Type::Array && row.elements.size() == 2;
  const std::string state = fields ? row.elements[0].str : "";
  const std::string what = std::string(id);
  if (state == "waiting") {
    return what + " is a parent waiting for its children and was not cancelled by this form: emq cancel " + q.queue +
           " " + what + " removes it";
  }
  if (state == "completed") {
    const std::string parent = fields && !row.elements[1].is_nil() ? row.elements[1].str : "its parent";
    return what +
           " is a completed child whose parent has not been told yet and was not cancelled: it leaves "
           "once a daemon running its queue delivers the news. If a daemon logs that it cannot tell " +
           parent + ", mend or cancel that parent (emq cancel QUEUE ID)";
  }
  return what +
         " is running (active) and was not cancelled; a running job cannot be taken from its worker: "
         "wait for it to end, then cancel it if it is retried";
}

std::vector<bool> delete_dead_jobs(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids) {
  std::vector<bool> deleted(ids.size(), false);
  for (std::size_t start = 0; start < ids.size(); start += kActionBatch) {
    const std::size_t end = std::min(ids.size(), start + kActionBatch);
    std::vector<Command> checks;
    for (std::size_t i = start; i < end; ++i) checks.push_back({"ZSCORE", q.dead, ids[i]});
    std::vector<Reply> scores = x.pipeline(checks);
    std::vector<std::string> dead;
    std::vector<std::size_t> at;
    for (std::size_t k = 0; k < scores.size(); ++k) {
      if (scores[k].is_error()) throw error_from_reply("dead delete", scores[k].str);
      if (scores[k].type != Reply::Type::String) continue;
      dead.push_back(ids[start + k]);
      at.push_back(start + k);
    }
    // Between the check and the cancel a job can be retried; cancel then
    // deletes it from pending. Only an operator's own second action can
    // race here, and the row still goes with its id.
    std::vector<CancelResult> r = cancel_jobs(x, q, dead, FlowMode::Plain);
    for (std::size_t k = 0; k < r.size(); ++k) deleted[at[k]] = r[k] == CancelResult::Removed;
  }
  return deleted;
}

PurgeResult purge(Executor& x, const QueueKeys& q, JobState state,
                  const std::function<void(const PurgeResult&)>& progress) {
  if (state == JobState::Active) {
    throw Error(ErrorKind::Invalid, "purge",
                "active jobs are running and cannot be purged: pause the queue and let them finish");
  }
  const std::string& set = set_key(q, state);
  std::int64_t left = count_jobs(x, q, state);

  PurgeResult result;
  while (left > 0) {
    // Refused ids stay at the head of the set: read past them.
    const std::int64_t n = std::min<std::int64_t>(left, kActionBatch);
    const std::int64_t from = result.refused_active;
    Reply ids = x.command({"ZRANGE", set, std::to_string(from), std::to_string(from + n - 1)});
    if (ids.is_error()) throw error_from_reply("purge", ids.str);
    if (ids.elements.empty()) break;
    std::vector<std::string> batch;
    batch.reserve(ids.elements.size());
    for (Reply& e : ids.elements) batch.push_back(std::move(e.str));
    std::vector<CancelResult> r = cancel_jobs(x, q, batch, state == JobState::Dead ? FlowMode::Plain : FlowMode::Flow);
    std::vector<Command> still;
    for (std::size_t k = 0; k < r.size(); ++k) {
      if (r[k] == CancelResult::Removed) ++result.removed;
      if (r[k] == CancelResult::Refused) still.push_back({"ZSCORE", set, batch[k]});
    }
    // A job claimed between the read and its cancel has left the set; one
    // whose row says active while it sits here stays, and is read past.
    if (!still.empty()) {
      for (const Reply& score : x.pipeline(still)) {
        if (score.type == Reply::Type::String) ++result.refused_active;
      }
    }
    left -= static_cast<std::int64_t>(batch.size());
    if (progress) progress(result);
  }
  return result;
}

}  // namespace echomq
