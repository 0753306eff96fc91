/* EMQ.FAIL: the native twin of lua/fail.lua.
  Settle a job that failed; retry it or send it to dead.
  Fenced like complete. The job is dead when permanent is 1 or its
  attempts have reached max_attempts; otherwise it is retried, through the
  delayed set when backoff_ms > 0, else straight back to pending at its lane.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:pending    zset  member id, score lane
  KEYS[5]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[6]  emq:{q}:stats      hash  counters retried, dead
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  error              error text; the row keeps its first 4096 bytes
  ARGV[4]  max_attempts       integer > 0
  ARGV[5]  backoff_ms         integer >= 0
  ARGV[6]  permanent          0 or 1

  Reply:   0 lease lost (nothing changes)
           1 will retry (state delayed or pending)
           2 dead (state dead, dead score now)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when max_attempts, backoff_ms or permanent is malformed
*/
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW,     EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,
                                    EMQ_KEY_PENDING, EMQ_KEY_DEAD,   EMQ_KEY_STATS};
static const EmqTransition kFail = {"EMQ.FAIL", kRoles, 6, 2};

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
  if (!emq_int_arg(&call, 4, 0, 1, "EMQARG max_attempts must be an integer > 0", &max_attempts) ||
      !emq_int_arg(&call, 5, 0, 0, "EMQARG backoff_ms must be a non-negative integer", &backoff_ms)) {
    return REDISMODULE_OK;
  }
  const char *permanent = emq_arg(&call, 6, &len);
  if (permanent == NULL || len != 1 || (permanent[0] != '0' && permanent[0] != '1')) {
    return emq_reply_error(ctx, "EMQARG permanent must be 0 or 1");
  }

  RedisModuleKey *row = emq_open_held_row(ctx, row_name, epoch);
  if (row == NULL) return REDISMODULE_OK;
  /* active, delayed, pending, dead: KEYS[2..5]. */
  RedisModuleKey *sets[4];
  for (int k = 0; k < 4; ++k) {
    sets[k] = emq_open_write(ctx, call.keys[1 + k]);
    if (!emq_require_type(ctx, sets[k], REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  RedisModuleKey *active = sets[0], *delayed = sets[1], *pending = sets[2], *dead = sets[3];
  long long failures, retried, died;
  if (!emq_require_counter(ctx, row, EMQ_WORD_FAILURES, 1, &failures)) return REDISMODULE_OK;
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  if (!emq_require_counter(ctx, stats, EMQ_WORD_RETRIED, 1, &retried) ||
      !emq_require_counter(ctx, stats, EMQ_WORD_DEAD, 1, &died)) {
    return REDISMODULE_OK;
  }
  double attempts = 0;
  RedisModuleString *a = emq_hget(row, EMQ_WORD_ATTEMPTS);
  if (a != NULL) {
    const char *ap = RedisModule_StringPtrLen(a, &len);
    if (!emq_lua_tonumber(ap, len, &attempts)) attempts = 0;
  }
  double lane = emq_row_lane(row);
  const char *err = emq_arg(&call, 3, &len);
  RedisModuleString *error = RedisModule_CreateString(ctx, err ? err : "", len > EMQ_MAX_ERROR ? EMQ_MAX_ERROR : len);

  mstime_t now = emq_now_ms();
  emq_zrem(ctx, active, active_name, id);
  emq_hincrby(ctx, row, row_name, EMQ_WORD_FAILURES, failures, 1);
  const EmqWord field = EMQ_WORD_ERROR;
  emq_hset(ctx, row, row_name, 1, &field, &error);

  if (permanent[0] == '1' || attempts >= max_attempts) {
    emq_set_state(ctx, row, row_name, EMQ_WORD_DEAD);
    emq_zadd(ctx, dead, dead_name, (double)now, id, 0);
    emq_hincrby(ctx, stats, stats_name, EMQ_WORD_DEAD, died, 1);
    return RedisModule_ReplyWithLongLong(ctx, 2);
  }
  if (backoff_ms > 0) {
    emq_set_state(ctx, row, row_name, EMQ_WORD_DELAYED);
    emq_zadd(ctx, delayed, delayed_name, (double)now + backoff_ms, id, 0);
  } else {
    emq_set_state(ctx, row, row_name, EMQ_WORD_PENDING);
    emq_zadd(ctx, pending, pending_name, lane, id, 0);
  }
  emq_hincrby(ctx, stats, stats_name, EMQ_WORD_RETRIED, retried, 1);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
