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
  CronFire fire{name, x.server_time_ms(), settings->lane, settings->skip_overlap};
  const std::string id = mint_job_id();
  switch (enqueue_cron(x, q, id, payload, fire)) {
    case CronFireResult::Enqueued: out.job_id = id; break;
    case CronFireResult::Skipped: out.kind = FireOutcome::Kind::Skipped; break;
    case CronFireResult::Already: out.kind = FireOutcome::Kind::MarkerAhead; break;
  }
  return out;
}

}  // namespace echomq::cli
