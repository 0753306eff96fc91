#include "echomq/queues.h"

#include "echomq/errors.h"
#include "echomq/stats.h"

namespace echomq {

ForgetResult forget_queue(Executor& x, const QueueKeys& q) {
  const QueueStats s = stats(x, q);
  ForgetResult out;
  out.pending = s.pending;
  out.active = s.active;
  out.delayed = s.delayed;
  out.dead = s.dead;
  if (s.pending + s.active + s.delayed + s.dead > 0) {
    Reply known = x.command({"SISMEMBER", std::string(kQueuesKey), q.queue});
    if (known.is_error()) throw error_from_reply("forget", known.str);
    out.was_known = known.integer == 1;
    return out;
  }
  Reply r = x.command({"SREM", std::string(kQueuesKey), q.queue});
  if (r.is_error()) throw error_from_reply("forget", r.str);
  out.was_known = r.integer == 1;
  out.forgotten = out.was_known;
  return out;
}

}  // namespace echomq
