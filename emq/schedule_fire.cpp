#include "schedule_fire.h"

#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "schedule_view.h"

namespace echomq::cli {

FireOutcome fire_schedule(Executor& x, const QueueKeys& q, const std::string& name, const std::string& payload) {
  FireOutcome out;
  Reply text = x.command({"HGET", q.schedules, name});
  if (text.type != Reply::Type::String) {
    out.kind = FireOutcome::Kind::NoSchedule;
    return out;
  }
  const std::optional<FireSettings> settings = fire_settings(text.str, out.problem);
  if (!settings) {
    out.kind = FireOutcome::Kind::Broken;
    return out;
  }
  CronFire fire{name, x.server_time_ms(), settings->lane, settings->skip_overlap, settings->job, settings->group};
  const std::string id = mint_job_id();
  KeyHolder holder;
  switch (decode_enqueue_cron(x.eval(enqueue_cron_call(q, id, payload, fire)), &holder)) {
    case CronFireResult::Enqueued: out.job_id = id; break;
    case CronFireResult::Skipped: out.kind = FireOutcome::Kind::Skipped; break;
    case CronFireResult::Already: out.kind = FireOutcome::Kind::MarkerAhead; break;
    case CronFireResult::KeyHeld:
    case CronFireResult::Replaced:
      out.kind = FireOutcome::Kind::KeyHeld;
      out.job_id = holder.id;
      out.problem = holder.state;
      break;
  }
  return out;
}

}  // namespace echomq::cli
