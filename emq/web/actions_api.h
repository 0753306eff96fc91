// The operator's actions of `emq web` beside retry and cancel
// (docs/web.md, "Actions"): run a delayed job now, fire a schedule now,
// change a queue's limits, delete every dead job. Each is the call `emq`
// makes for the same thing (promote_jobs, fire_schedule, change_limits,
// purge), so the page and the CLI act and refuse alike. The caller has
// checked the token, the origin and --read-only.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

class ActionsApi {
 public:
  explicit ActionsApi(Executor& x) : x_(x) {}

  // POST /api/queues/Q/jobs/ID/promote
  ApiAnswer promote(const std::string& queue, const std::string& id);
  // POST /api/queues/Q/schedules/NAME/fire
  ApiAnswer fire(const std::string& queue, const std::string& name);
  // POST /api/queues/Q/limits?max_active=N|off&rate=N/PERIOD|off: a value
  // absent ("") is left as it is.
  ApiAnswer limits(const std::string& queue, const std::string& max_active, const std::string& rate);
  // POST /api/queues/Q/dead/purge
  ApiAnswer purge_dead(const std::string& queue);

 private:
  Executor& x_;
};

}  // namespace echomq::cli
