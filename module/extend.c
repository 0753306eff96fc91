/* EMQ.EXTEND: the native twin of lua/extend.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua.
 * Every job is decided before any lease is renewed. */
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ACTIVE, EMQ_KEY_ROW_ROOT};
static const EmqTransition kExtend = {"EMQ.EXTEND", kRoles, 2, 0, 0, {EMQ_KEY_EVENTS}, 0};

/* Whether the job's lease still holds: its row is active at this epoch and
 * the id is in the active set. -1 when the caller may not read the row, or
 * it is not a hash (the script would stop there with the ACL failure or
 * WRONGTYPE; it has been replied). */
static int holds(RedisModuleCtx *ctx, RedisModuleKey *active, RedisModuleString *root, RedisModuleString *id,
                 RedisModuleString *epoch) {
  RedisModuleString *row_name = emq_row_key(ctx, root, id);
  if (!emq_may_touch_rows(ctx, "EMQ.EXTEND", &row_name, 1, REDISMODULE_CMD_KEY_ACCESS)) return -1;
  RedisModuleKey *row = emq_open_read(ctx, row_name);
  if (!emq_require_type(ctx, row, REDISMODULE_KEYTYPE_HASH)) return -1;
  int held = emq_holds_lease(row, epoch);
  RedisModule_CloseKey(row);
  double score;
  return held && RedisModule_KeyType(active) == REDISMODULE_KEYTYPE_ZSET &&
         RedisModule_ZsetScore(active, id, &score) == REDISMODULE_OK;
}

int emq_extend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kExtend, &call)) return REDISMODULE_OK;
  double lease_ms;
  if (!emq_int_arg(&call, 1, 0, 1, EMQ_MAX_MS, "EMQARG lease_ms must be an integer in 1..1000000000000", &lease_ms)) {
    return REDISMODULE_OK;
  }
  if (call.num_args % 2 != 1) return emq_reply_error(ctx, "EMQARG extend takes lease_ms then id, epoch pairs");
  for (int i = 2; i <= call.num_args; i += 2) {
    if (!emq_job_id_arg(&call, i)) return REDISMODULE_OK;
  }
  RedisModuleString *active_name = call.keys[0], *root = call.keys[1];
  RedisModuleKey *active = emq_open_write(ctx, active_name);
  if (!emq_require_type(ctx, active, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;

  /* Decide every job first, then write: a renewal changes only a score,
   * never what a later pair's check reads, and a row of the wrong type
   * stops the call before anything is written. */
  const size_t jobs = (size_t)call.num_args / 2;
  if (jobs == 0) return RedisModule_ReplyWithArray(ctx, 0);
  char *renew = RedisModule_PoolAlloc(ctx, jobs);
  for (size_t j = 0; j < jobs; ++j) {
    const int held = holds(ctx, active, root, call.args[1 + 2 * j], call.args[2 + 2 * j]);
    if (held < 0) return REDISMODULE_OK;
    renew[j] = (char)held;
  }
  const double deadline = (double)emq_now_ms() + lease_ms;
  RedisModule_ReplyWithArray(ctx, (long)jobs);
  for (size_t j = 0; j < jobs; ++j) {
    if (renew[j]) emq_zadd(ctx, active, active_name, deadline, call.args[1 + 2 * j], 1);
    RedisModule_ReplyWithLongLong(ctx, renew[j]);
  }
  return REDISMODULE_OK;
}
