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

static int digits_arg(const EmqCall *call, int i, double *out) {
  size_t len;
  const char *s = emq_arg(call, i, &len);
  return emq_matches_int(s, len, 0) && emq_lua_tonumber(s, len, out);
}

int emq_fail(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kFail, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *active_name = call.keys[1], *delayed_name = call.keys[2],
                    *pending_name = call.keys[3], *dead_name = call.keys[4], *stats_name = call.keys[5];
  RedisModuleString *id = call.args[0], *epoch = call.args[1];
  size_t len;
  const char *s = emq_arg(&call, 1, &len);
  if (!emq_is_job_id(s, len)) return emq_reply_error(ctx, "EMQKIND job id must be JOB-namespaced");
  double max_attempts, backoff_ms;
  if (!digits_arg(&call, 4, &max_attempts) || max_attempts <= 0) {
    return emq_reply_error(ctx, "EMQARG max_attempts must be an integer > 0");
  }
  if (!digits_arg(&call, 5, &backoff_ms)) {
    return emq_reply_error(ctx, "EMQARG backoff_ms must be a non-negative integer");
  }
  const char *permanent = emq_arg(&call, 6, &len);
  if (permanent == NULL || len != 1 || (permanent[0] != '0' && permanent[0] != '1')) {
    return emq_reply_error(ctx, "EMQARG permanent must be 0 or 1");
  }

  RedisModuleKey *row = emq_open_read(ctx, row_name);
  if (!emq_require_type(ctx, row, REDISMODULE_KEYTYPE_HASH)) return REDISMODULE_OK;
  if (!emq_holds_lease(row, epoch)) return RedisModule_ReplyWithLongLong(ctx, 0);
  for (int k = 1; k <= 4; ++k) {
    if (!emq_require_type_of(ctx, call.keys[k], REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  if (!emq_require_counter(ctx, row, "failures", 1)) return REDISMODULE_OK;
  RedisModuleKey *stats = emq_open_read(ctx, stats_name);
  if (!emq_require_counter(ctx, stats, "retried", 1) || !emq_require_counter(ctx, stats, "dead", 1)) {
    return REDISMODULE_OK;
  }
  double attempts = 0;
  RedisModuleString *a = emq_hget(row, "attempts");
  if (a != NULL) {
    const char *ap = RedisModule_StringPtrLen(a, &len);
    if (!emq_lua_tonumber(ap, len, &attempts)) attempts = 0;
  }
  double lane = emq_row_lane(row);
  const char *err = emq_arg(&call, 3, &len);
  RedisModuleString *error = RedisModule_CreateString(ctx, err ? err : "", len > EMQ_MAX_ERROR ? EMQ_MAX_ERROR : len);

  mstime_t now = emq_now_ms();
  emq_zrem(ctx, emq_open_write(ctx, active_name), active_name, id);
  row = emq_reopen_write(ctx, row, row_name);
  emq_hincrby(ctx, row, row_name, "failures", 1);
  const char *field = "error";
  emq_hset(ctx, row, row_name, 1, &field, &error);
  stats = emq_reopen_write(ctx, stats, stats_name);

  if (permanent[0] == '1' || attempts >= max_attempts) {
    emq_hset1(ctx, row, row_name, "state", "dead");
    emq_zadd(ctx, emq_open_write(ctx, dead_name), dead_name, (double)now, id, 0);
    emq_hincrby(ctx, stats, stats_name, "dead", 1);
    return RedisModule_ReplyWithLongLong(ctx, 2);
  }
  if (backoff_ms > 0) {
    emq_hset1(ctx, row, row_name, "state", "delayed");
    emq_zadd(ctx, emq_open_write(ctx, delayed_name), delayed_name, (double)now + backoff_ms, id, 0);
  } else {
    emq_hset1(ctx, row, row_name, "state", "pending");
    emq_zadd(ctx, emq_open_write(ctx, pending_name), pending_name, lane, id, 0);
  }
  emq_hincrby(ctx, stats, stats_name, "retried", 1);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
