/* EMQ.FAIL: the native twin of lua/fail.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. */
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW,     EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,
                                    EMQ_KEY_PENDING, EMQ_KEY_DEAD,   EMQ_KEY_STATS};
static const EmqTransition kFail = {"EMQ.FAIL", kRoles, 6, 2, 1};

#define EMQ_MAX_ERROR 4096

int emq_fail(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kFail, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *active_name = call.keys[1], *delayed_name = call.keys[2],
                    *pending_name = call.keys[3], *dead_name = call.keys[4], *stats_name = call.keys[5];
  RedisModuleString *id = call.args[0], *epoch = call.args[1];
  size_t len;
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;
  double max_attempts, backoff_ms;
  if (!emq_int_arg(&call, 4, 0, 1, EMQ_MAX_BATCH, "EMQARG max_attempts must be an integer in 1..1000000",
                   &max_attempts) ||
      !emq_int_arg(&call, 5, 0, 0, EMQ_MAX_MS, "EMQARG backoff_ms must be an integer in 0..1000000000000",
                   &backoff_ms)) {
    return REDISMODULE_OK;
  }
  const char *permanent = emq_arg(&call, 6, &len);
  if (permanent == NULL || len != 1 || (permanent[0] != '0' && permanent[0] != '1')) {
    return emq_reply_error(ctx, "EMQARG permanent must be 0 or 1");
  }

  RedisModuleKey *row = emq_open_held_row(ctx, row_name, epoch);
  if (row == NULL) return REDISMODULE_OK;
  long long attempts, failures, counter;
  double lane;
  if (!emq_row_field_counter(row, EMQ_WORD_ATTEMPTS, &attempts)) {
    return emq_reply_malformed(ctx, row_name, EMQ_WORD_ATTEMPTS, EMQ_RULE_COUNTER);
  }
  if (!emq_row_field_counter(row, EMQ_WORD_FAILURES, &failures)) {
    return emq_reply_malformed(ctx, row_name, EMQ_WORD_FAILURES, EMQ_RULE_COUNTER);
  }
  if (!emq_row_lane(row, &lane)) return emq_reply_malformed(ctx, row_name, EMQ_WORD_LANE, EMQ_RULE_LANE);
  const int dies = permanent[0] == '1' || (double)attempts >= max_attempts;
  const EmqWord counter_field = dies ? EMQ_WORD_DEAD : EMQ_WORD_RETRIED;
  /* Where the job goes: dead now, delayed until now+backoff_ms, or pending
   * at its lane. Only that set and active are checked, as the script
   * checks them: the others are not touched, whatever they hold. */
  const mstime_t now = emq_now_ms();
  EmqWord state = EMQ_WORD_PENDING;
  RedisModuleString *target_name = pending_name;
  double score = lane;
  if (dies) {
    state = EMQ_WORD_DEAD;
    target_name = dead_name;
    score = (double)now;
  } else if (backoff_ms > 0) {
    state = EMQ_WORD_DELAYED;
    target_name = delayed_name;
    score = (double)now + backoff_ms;
  }
  RedisModuleKey *active = emq_open_write(ctx, active_name), *target = emq_open_write(ctx, target_name);
  if (!emq_require_type(ctx, target, REDISMODULE_KEYTYPE_ZSET) ||
      !emq_require_type(ctx, active, REDISMODULE_KEYTYPE_ZSET)) {
    return REDISMODULE_OK;
  }
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  const int counted = emq_stats_counter(stats, counter_field, &counter);
  const char *err = emq_arg(&call, 3, &len);
  RedisModuleString *error = RedisModule_CreateString(ctx, err ? err : "", len > EMQ_MAX_ERROR ? EMQ_MAX_ERROR : len);

  emq_zrem(ctx, active, active_name, id);
  emq_hincrby(ctx, row, row_name, EMQ_WORD_FAILURES, failures, 1);
  const EmqWord field = EMQ_WORD_ERROR;
  emq_hset(ctx, row, row_name, 1, &field, &error);

  emq_set_state(ctx, row, row_name, state);
  emq_zadd(ctx, target, target_name, score, id, 0);
  emq_emit(ctx, &call.events, state, id, emq_hget(row, EMQ_WORD_ATTEMPTS), "error", error);
  emq_count(ctx, stats, stats_name, counter_field, counted, counter, 1, "fail");
  return RedisModule_ReplyWithLongLong(ctx, dies ? 2 : 1);
}
