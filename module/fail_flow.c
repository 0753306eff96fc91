/* EMQ.FAIL_FLOW: the native twin of lua/fail_flow.lua. That script's
 * header is the contract; this file follows it byte for byte, on the
 * server's keys, without Lua. It is EMQ.FAIL (settle.h's steps) and: when
 * the job goes dead and its row has parent, its id goes to the outbox at
 * the same time as to dead. A retried job is not news; a dead parent
 * keeps its deps and results (the roots are in KEYS, never touched).
 *
 *   KEYS   row, active, delayed, pending, dead, stats, outbox, deps root,
 *          results root, the uniq root (optional), and the events stream
 *          (optional, last)
 *   ARGV   id, lease_epoch, error, max_attempts, backoff_ms, permanent,
 *          and with the stream its length
 *   Reply  0 lease lost (nothing changes), 1 will retry, 2 dead; EMQKIND,
 *          EMQARG, EMQROW (the row's attempts, failures or lane), WRONGTYPE
 *          (the set it goes to, a dying child's outbox, or the stream of
 *          another type), and the module's own EMQLAYOUT and EMQWIRE */
#include "settle.h"
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW,   EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,   EMQ_KEY_PENDING,     EMQ_KEY_DEAD,
                                    EMQ_KEY_STATS, EMQ_KEY_OUTBOX, EMQ_KEY_DEPS_ROOT, EMQ_KEY_RESULTS_ROOT};
static const EmqTransition kFailFlow = {"EMQ.FAIL_FLOW",
                                        kRoles,
                                        9,
                                        2,
                                        1,
                                        {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX,
                                         EMQ_KEY_ROT, EMQ_KEY_GROUPS, EMQ_KEY_GWAIT, EMQ_KEY_UNIQ_ROOT},
                                        8};

int emq_fail_flow(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqFailure f;
  if (!emq_failure_open(ctx, argv, argc, &kFailFlow, &f)) return REDISMODULE_OK;
  RedisModuleString *outbox_name = f.call.keys[6];
  RedisModuleKey *outbox = NULL;
  if (f.dies && emq_hget(f.row, EMQ_WORD_PARENT) != NULL) {
    outbox = emq_open_write(ctx, outbox_name);
    if (!emq_require_type(ctx, outbox, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  emq_failure_settle(ctx, &f);
  if (outbox != NULL) emq_zadd(ctx, outbox, outbox_name, (double)f.now, f.id, 0);
  if (!emq_failure_group(ctx, &f)) return REDISMODULE_OK;
  return emq_failure_finish(ctx, &f, "fail_flow");
}
