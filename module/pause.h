/* A queue's pause as EMQ.CLAIM reads it from meta (PROTOCOL.md, "Pause"),
 * with lua/claim.lua's rules: paused = 1 holds while paused_until is
 * absent or later than now; an end that has come is lifted by deleting
 * the pause's four fields; an end that is not the server's integer form
 * within 0..10^15 refuses the claim, naming it, before any write. */
#ifndef EMQ_PAUSE_H
#define EMQ_PAUSE_H

#include "module_api.h"

typedef enum {
  EMQ_PAUSE_NONE,    /* not paused: claim as usual */
  EMQ_PAUSE_HOLDS,   /* paused: claim nothing, write nothing */
  EMQ_PAUSE_OVER,    /* its end has come: emq_lift_pause, then claim as usual */
  EMQ_PAUSE_REFUSED, /* paused_until is broken: the error has been replied */
} EmqPause;

/* meta: opened for writing, a hash or absent. */
EmqPause emq_read_pause(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name, mstime_t now);

/* HDEL meta paused paused_by paused_reason paused_until, as the script's. */
void emq_lift_pause(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name);

#endif
