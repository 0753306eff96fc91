/* EMQ.FAIL: the native twin of lua/fail.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. Its steps are settle.h's,
 * which EMQ.FAIL_FLOW shares. */
#include "settle.h"
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW,     EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,
                                    EMQ_KEY_PENDING, EMQ_KEY_DEAD,   EMQ_KEY_STATS};
static const EmqTransition kFail = {"EMQ.FAIL",
                                    kRoles,
                                    6,
                                    2,
                                    1,
                                    {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX, EMQ_KEY_ROT,
                                     EMQ_KEY_GROUPS, EMQ_KEY_GWAIT, EMQ_KEY_UNIQ_ROOT},
                                    8};

int emq_fail(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqFailure f;
  if (!emq_failure_open(ctx, argv, argc, &kFail, &f)) return REDISMODULE_OK;
  emq_failure_settle(ctx, &f);
  if (!emq_failure_group(ctx, &f)) return REDISMODULE_OK;
  return emq_failure_finish(ctx, &f, "fail");
}
