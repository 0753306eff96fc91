#include "echomq/transitions.h"

#include "echomq/job_id.h"
#include "script_replies.h"

namespace echomq {

namespace {
std::string num(std::int64_t v) { return std::to_string(v); }

void check_lane(int lane) {
  if (lane < kMinLane || lane > kMaxLane) {
    throw Error(ErrorKind::Invalid, "lane", std::to_string(lane) + " is out of range: use -1000..1000");
  }
}
}  // namespace

const char* unique_mode_name(UniqueMode m) {
  switch (m) {
    case UniqueMode::Started: return "started";
    case UniqueMode::Window: return "window";
    case UniqueMode::Replace: return "replace";
    default: return "finished";
  }
}

std::optional<UniqueMode> unique_mode_from(std::string_view name) {
  for (UniqueMode m : {UniqueMode::Finished, UniqueMode::Started, UniqueMode::Window, UniqueMode::Replace}) {
    if (name == unique_mode_name(m)) return m;
  }
  return std::nullopt;
}

namespace {
constexpr std::int64_t kMaxWindowMs = 1000000000000;

void check_job_options(const JobOptions& o) {
  if (o.unique) {
    check_unique_key(o.unique->key);
    const UniqueKey& u = *o.unique;
    if (u.for_ms < 0 || u.for_ms > kMaxWindowMs) {
      throw Error(ErrorKind::Invalid, "unique window", "must be 1 ms to 10^12 ms (31 years)");
    }
    if (u.mode == UniqueMode::Window && u.for_ms == 0) {
      throw Error(ErrorKind::Invalid, "unique mode", "window needs a window: give it in ms (unique_for)");
    }
    if (u.for_ms > 0 && u.mode && u.mode != UniqueMode::Window) {
      throw Error(ErrorKind::Invalid, "unique mode",
                  std::string(unique_mode_name(*u.mode)) + " takes no window: a window is the window mode");
    }
  }
  if (!o.traceparent.empty() && o.traceparent.size() != 55) {
    throw Error(ErrorKind::Invalid, "traceparent", "must be a W3C traceparent header of 55 bytes");
  }
  if (o.tracestate.size() > 512) throw Error(ErrorKind::Invalid, "tracestate", "must be at most 512 bytes");
}

bool has_job_options(const JobOptions& o) { return o.unique || !o.traceparent.empty() || !o.tracestate.empty(); }
}  // namespace

void add_job_options(const QueueKeys& q, const JobOptions& o, std::vector<std::string>& keys,
                     std::vector<std::string>& args) {
  check_job_options(o);
  if (o.unique) {
    keys.push_back(q.uniq(o.unique->key));
    args.insert(args.end(), {"unique", o.unique->key});
    if (o.unique->mode) args.insert(args.end(), {"unique_mode", unique_mode_name(*o.unique->mode)});
    if (o.unique->for_ms > 0) args.insert(args.end(), {"unique_for_ms", num(o.unique->for_ms)});
  }
  if (!o.traceparent.empty()) args.insert(args.end(), {"traceparent", o.traceparent});
  if (!o.tracestate.empty()) args.insert(args.end(), {"tracestate", o.tracestate});
}

void add_group_option(const QueueKeys& q, std::string_view group, std::vector<std::string>& keys,
                      std::vector<std::string>& args) {
  if (group.empty()) return;
  keys.insert(keys.end(), {q.gq(group), q.grp(group), q.gact(group), q.gidx, q.rot, q.groups});
  args.insert(args.end(), {"group", std::string(group)});
}

ScriptCall enqueue_call(const QueueKeys& q, std::string_view id, std::string_view payload, const EnqueueOptions& o) {
  check_lane(o.lane);
  check_job_id(id);  // a new id is minted or taken from a user: the full form
  std::string row = q.row(id);
  if (has_job_options(o.job) || !o.group.empty()) {
    // The optioned enqueue: delayed with a due time, then the lock, then
    // the group's six.
    ScriptCall call{Script::Enqueue, {std::move(row), q.pending}, {std::string(id), std::string(payload)}};
    if (o.lane != 0) call.args.insert(call.args.end(), {"lane", num(o.lane)});
    if (o.due_ms) {
      call.keys.push_back(q.delayed);
      call.args.insert(call.args.end(), {"due_ms", num(*o.due_ms)});
    }
    add_job_options(q, o.job, call.keys, call.args);
    add_group_option(q, o.group, call.keys, call.args);
    return call;
  }
  if (o.due_ms) {
    return {Script::EnqueueAt,
            {std::move(row), q.delayed},
            {std::string(id), std::string(payload), num(*o.due_ms), num(o.lane)}};
  }
  if (o.lane != 0) {
    return {Script::EnqueueLane, {std::move(row), q.pending}, {std::string(id), std::string(payload), num(o.lane)}};
  }
  return {Script::Enqueue, {std::move(row), q.pending}, {std::string(id), std::string(payload)}};
}

EnqueueResult decode_enqueue(const Reply& r, KeyHolder* holder) {
  switch (holder_reply(r, "enqueue", holder)) {
    case 1: return EnqueueResult::Enqueued;
    case 2: return EnqueueResult::Replaced;
    default: return EnqueueResult::Duplicate;
  }
}

EnqueueResult enqueue(Executor& x, const QueueKeys& q, std::string_view id, std::string_view payload,
                      const EnqueueOptions& options) {
  return decode_enqueue(x.eval(enqueue_call(q, id, payload, options)));
}

ScriptCall enqueue_cron_call(const QueueKeys& q, std::string_view id, std::string_view payload, const CronFire& f) {
  ScriptCall call{Script::EnqueueCron,
                  {q.row(id), q.pending, q.cron, q.row_root},
                  {std::string(id), std::string(payload), std::string(f.name), num(f.fire_ms), num(f.lane),
                   f.skip_overlap ? "skip" : "allow"}};
  add_job_options(q, f.job, call.keys, call.args);
  add_group_option(q, f.group, call.keys, call.args);
  return call;
}

CronFireResult decode_enqueue_cron(const Reply& r, KeyHolder* holder) {
  const bool names_holder = r.type == Reply::Type::Array;
  switch (holder_reply(r, "enqueue_cron", holder)) {
    case 1: return CronFireResult::Enqueued;
    case 2: return names_holder ? CronFireResult::Replaced : CronFireResult::Skipped;
    default: return names_holder ? CronFireResult::KeyHeld : CronFireResult::Already;
  }
}

CronFireResult enqueue_cron(Executor& x, const QueueKeys& q, std::string_view id, std::string_view payload,
                            const CronFire& fire) {
  return decode_enqueue_cron(x.eval(enqueue_cron_call(q, id, payload, fire)), nullptr);
}

ScriptCall claim_call(const QueueKeys& q, const ClaimArgs& a) {
  ScriptCall call{Script::Claim,
                  {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root},
                  {num(a.lease_ms), num(a.max_count), num(a.promote_limit)}};
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

std::vector<ClaimedJob> decode_claim(Reply r) {
  throw_if_error(r, "claim");
  if (r.type != Reply::Type::Array || r.elements.size() % 4 != 0) {
    throw Error(ErrorKind::Protocol, "claim", "expected a flat job list [id, payload, attempts, lease_epoch, ...]");
  }
  std::vector<ClaimedJob> jobs;
  jobs.reserve(r.elements.size() / 4);
  for (std::size_t i = 0; i < r.elements.size(); i += 4) {
    ClaimedJob job;
    job.id = std::move(r.elements[i].str);
    job.payload = std::move(r.elements[i + 1].str);
    job.attempt = integer_of(r.elements[i + 2], "claim");
    job.lease_epoch = integer_of(r.elements[i + 3], "claim");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<ClaimedJob> claim(Executor& x, const QueueKeys& q, const ClaimArgs& a) {
  return decode_claim(x.eval(claim_call(q, a)));
}

ScriptCall extend_call(const QueueKeys& q, std::int64_t lease_ms, const std::vector<Lease>& leases) {
  ScriptCall call{Script::Extend, {q.active, q.row_root}, {num(lease_ms)}};
  call.args.reserve(1 + 2 * leases.size());
  for (const Lease& l : leases) {
    check_wire_gate(l.id);
    call.args.push_back(l.id);
    call.args.push_back(num(l.epoch));
  }
  return call;
}

std::vector<bool> decode_extend(const Reply& r, std::size_t leases) {
  throw_if_error(r, "extend");
  if (r.type != Reply::Type::Array || r.elements.size() != leases) {
    throw Error(ErrorKind::Protocol, "extend", "expected one 0/1 per lease");
  }
  std::vector<bool> kept;
  kept.reserve(leases);
  for (const Reply& e : r.elements) kept.push_back(integer_of(e, "extend") == 1);
  return kept;
}

std::vector<bool> extend(Executor& x, const QueueKeys& q, std::int64_t lease_ms, const std::vector<Lease>& leases) {
  if (leases.empty()) return {};
  return decode_extend(x.eval(extend_call(q, lease_ms, leases)), leases.size());
}

ScriptCall progress_call(const QueueKeys& q, const Lease& lease, std::string_view value) {
  check_wire_gate(lease.id);
  return {Script::Progress, {q.row(lease.id), q.active}, {lease.id, num(lease.epoch), std::string(value)}};
}

bool decode_progress(const Reply& r) { return integer_of(r, "progress") == 1; }

bool progress(Executor& x, const QueueKeys& q, const Lease& lease, std::string_view value) {
  return decode_progress(x.eval(progress_call(q, lease, value)));
}

ScriptCall complete_call(const QueueKeys& q, const Lease& l, std::int64_t keep_ms, std::string_view result,
                         FlowMode mode) {
  ScriptCall call{
      Script::Complete, {q.row(l.id), q.active, q.stats}, {l.id, num(l.epoch), num(keep_ms), std::string(result)}};
  if (mode == FlowMode::Flow) {
    call.script = Script::CompleteFlow;
    call.keys.insert(call.keys.end(), {q.outbox, q.deps_root, q.results_root});
  }
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

CompleteResult decode_complete(const Reply& r) {
  return integer_of(r, "complete") == 1 ? CompleteResult::Completed : CompleteResult::LeaseLost;
}

CompleteResult complete(Executor& x, const QueueKeys& q, const Lease& lease, std::int64_t keep_ms,
                        std::string_view result) {
  return decode_complete(x.eval(complete_call(q, lease, keep_ms, result)));
}

ScriptCall fail_call(const QueueKeys& q, const Lease& l, const FailArgs& a, FlowMode mode) {
  ScriptCall call{
      Script::Fail,
      {q.row(l.id), q.active, q.delayed, q.pending, q.dead, q.stats},
      {l.id, num(l.epoch), std::string(a.error), num(a.max_attempts), num(a.backoff_ms), a.permanent ? "1" : "0"}};
  if (mode == FlowMode::Flow) {
    call.script = Script::FailFlow;
    call.keys.insert(call.keys.end(), {q.outbox, q.deps_root, q.results_root});
  }
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

FailResult decode_fail(const Reply& r) {
  switch (integer_of(r, "fail")) {
    case 1: return FailResult::Retry;
    case 2: return FailResult::Dead;
    default: return FailResult::LeaseLost;
  }
}

FailResult fail(Executor& x, const QueueKeys& q, const Lease& lease, const FailArgs& args) {
  return decode_fail(x.eval(fail_call(q, lease, args)));
}

ScriptCall release_call(const QueueKeys& q, const Lease& l) {
  ScriptCall call{Script::Release, {q.row(l.id), q.active, q.pending, q.stats}, {l.id, num(l.epoch)}};
  q.add_group_block(call.keys);
  return call;
}

ReleaseResult decode_release(const Reply& r) {
  return integer_of(r, "release") == 1 ? ReleaseResult::Released : ReleaseResult::LeaseLost;
}

ReleaseResult release(Executor& x, const QueueKeys& q, const Lease& lease) {
  return decode_release(x.eval(release_call(q, lease)));
}

ReapResult reap(Executor& x, const QueueKeys& q, std::int64_t max_attempts, std::int64_t limit) {
  ScriptCall call{
      Script::Reap, {q.active, q.pending, q.dead, q.stats, q.row_root, q.outbox}, {num(max_attempts), num(limit)}};
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  Reply r = x.eval(call);
  if (r.type != Reply::Type::Array || r.elements.size() != 2) {
    throw Error(ErrorKind::Protocol, "reap", "expected [requeued, dead]");
  }
  return {integer_of(r.elements[0], "reap"), integer_of(r.elements[1], "reap")};
}

ScriptCall retry_dead_call(const QueueKeys& q, std::int64_t limit) {
  ScriptCall call{Script::RetryDead, {q.dead, q.pending, q.row_root}, {num(limit)}};
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

RetryDeadResult retry_dead(Executor& x, const QueueKeys& q, std::int64_t limit) {
  Reply r = x.eval(retry_dead_call(q, limit));
  throw_if_error(r, "retry_dead");
  if (r.type != Reply::Type::Array || r.elements.size() != 2) {
    throw Error(ErrorKind::Protocol, "retry_dead", "expected [moved, skipped]");
  }
  return {integer_of(r.elements[0], "retry_dead"), integer_of(r.elements[1], "retry_dead")};
}

ScriptCall retry_job_call(const QueueKeys& q, std::string_view id) {
  ScriptCall call{Script::RetryJob, {q.row(id), q.dead, q.pending}, {std::string(id)}};
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

RetryJobResult decode_retry_job(const Reply& r, KeyHolder* holder) {
  switch (holder_reply(r, "retry_job", holder)) {
    case 1: return RetryJobResult::Moved;
    case 2: return RetryJobResult::KeyHeld;
    default: return RetryJobResult::NotDead;
  }
}

RetryJobResult retry_job(Executor& x, const QueueKeys& q, std::string_view id) {
  return decode_retry_job(x.eval(retry_job_call(q, id)));
}

ScriptCall promote_job_call(const QueueKeys& q, std::string_view id) {
  ScriptCall call{Script::PromoteJob, {q.row(id), q.delayed, q.pending}, {std::string(id)}};
  q.add_group_block(call.keys);
  return call;
}

PromoteJobResult decode_promote_job(const Reply& r) {
  return integer_of(r, "promote_job") == 1 ? PromoteJobResult::Moved : PromoteJobResult::NotDelayed;
}

PromoteJobResult promote_job(Executor& x, const QueueKeys& q, std::string_view id) {
  return decode_promote_job(x.eval(promote_job_call(q, id)));
}

ScriptCall cancel_call(const QueueKeys& q, std::string_view id, FlowMode mode) {
  ScriptCall call{Script::Cancel, {q.row(id), q.pending, q.delayed, q.dead}, {std::string(id)}};
  if (mode == FlowMode::Flow) call.keys.insert(call.keys.end(), {q.outbox, q.waiting, q.deps(id), q.results(id)});
  q.add_group_block(call.keys);
  call.keys.push_back(q.uniq_root);
  return call;
}

CancelResult decode_cancel(const Reply& r) {
  switch (integer_of(r, "cancel")) {
    case 1: return CancelResult::Removed;
    case 2: return CancelResult::Refused;
    default: return CancelResult::NotFound;
  }
}

CancelResult cancel(Executor& x, const QueueKeys& q, std::string_view id, FlowMode mode) {
  return decode_cancel(x.eval(cancel_call(q, id, mode)));
}

std::int64_t trim_dead(Executor& x, const QueueKeys& q, std::int64_t older_than_ms, std::int64_t max_keep) {
  return integer_of(x.eval({Script::TrimDead, {q.dead, q.row_root, q.uniq_root}, {num(older_than_ms), num(max_keep)}}),
                    "trim_dead");
}

ScriptCall group_set_call(const QueueKeys& q, std::string_view group, std::string_view policy) {
  if (group != "*") check_group_name(group);
  const std::string g(group);
  return {Script::GroupSet, {q.groups, q.gq_root + g, q.grp_root + g, q.rot, q.gwait}, {g, std::string(policy)}};
}

bool group_set(Executor& x, const QueueKeys& q, std::string_view group, std::string_view policy) {
  return integer_of(x.eval(group_set_call(q, group, policy)), "group_set") == 1;
}

}  // namespace echomq
