/* EMQ.COMPLETE: the native twin of lua/complete.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. Its steps are settle.h's,
 * which EMQ.COMPLETE_FLOW shares. */
#include "settle.h"
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_ACTIVE, EMQ_KEY_STATS};
static const EmqTransition kComplete = {"EMQ.COMPLETE",
                                        kRoles,
                                        3,
                                        2,
                                        1,
                                        {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX,
                                         EMQ_KEY_ROT, EMQ_KEY_GROUPS, EMQ_KEY_GWAIT, EMQ_KEY_UNIQ_ROOT},
                                        8};

int emq_complete(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCompletion c;
  if (!emq_completion_open(ctx, argv, argc, &kComplete, &c)) return REDISMODULE_OK;
  emq_zrem(ctx, c.active, c.active_name, c.id);
  emq_completion_settle_row(ctx, &c);
  if (!emq_completion_group(ctx, &c)) return REDISMODULE_OK;
  emq_completion_release(ctx, &c);
  emq_completion_emit(ctx, &c);
  return emq_completion_finish(ctx, &c, "complete");
}
