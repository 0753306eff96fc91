/* EMQ.COMPLETE: the native twin of lua/complete.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. */
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_ACTIVE, EMQ_KEY_STATS};
static const EmqTransition kComplete = {"EMQ.COMPLETE", kRoles, 3, 2, 1};

int emq_complete(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kComplete, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *active_name = call.keys[1], *stats_name = call.keys[2];
  RedisModuleString *id = call.args[0], *epoch = call.args[1];
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;
  double keep_ms;
  if (!emq_int_arg(&call, 3, 0, 0, EMQ_MAX_MS, "EMQARG keep_ms must be an integer in 0..1000000000000", &keep_ms)) {
    return REDISMODULE_OK;
  }

  RedisModuleKey *row = emq_open_held_row(ctx, row_name, epoch);
  if (row == NULL) return REDISMODULE_OK;
  RedisModuleKey *active = emq_open_write(ctx, active_name);
  if (!emq_require_type(ctx, active, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  long long completed;
  const int counted = emq_stats_counter(stats, EMQ_WORD_COMPLETED, &completed);
  RedisModuleString *attempts = emq_hget(row, EMQ_WORD_ATTEMPTS);

  emq_zrem(ctx, active, active_name, id);
  if (keep_ms == 0) {
    emq_del(ctx, row, row_name);
  } else {
    const EmqWord fields[] = {EMQ_WORD_STATE, EMQ_WORD_RESULT};
    RedisModuleString *values[] = {emq_word(EMQ_WORD_COMPLETED),
                                   call.num_args >= 4 ? call.args[3] : emq_word(EMQ_WORD_EMPTY)};
    emq_hset(ctx, row, row_name, 2, fields, values);
    emq_pexpire(ctx, row, row_name, emq_now_ms() + (mstime_t)keep_ms);
  }
  emq_emit(ctx, &call.events, EMQ_WORD_COMPLETED, id, attempts, NULL, NULL);
  emq_count(ctx, stats, stats_name, EMQ_WORD_COMPLETED, counted, completed, 1, "complete");
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
