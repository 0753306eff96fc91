/* EMQ.RELEASE: the native twin of lua/release.lua.
  Give a running job back, for a graceful stop.
  Fenced like complete. The attempt does not count (attempts-1) and no
  failure is recorded; the job goes back to pending at its lane.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:stats      hash  counter released
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with

  Reply:   1 given back to pending
           0 lease lost (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
*/
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_ACTIVE, EMQ_KEY_PENDING, EMQ_KEY_STATS};
static const EmqTransition kRelease = {"EMQ.RELEASE", kRoles, 4, 2};

int emq_release(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kRelease, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *active_name = call.keys[1], *pending_name = call.keys[2],
                    *stats_name = call.keys[3];
  RedisModuleString *id = call.args[0], *epoch = call.args[1];
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;

  RedisModuleKey *row = emq_open_held_row(ctx, row_name, epoch);
  if (row == NULL) return REDISMODULE_OK;
  RedisModuleKey *active = emq_open_write(ctx, active_name);
  RedisModuleKey *pending = emq_open_write(ctx, pending_name);
  long long attempts, released;
  if (!emq_require_type(ctx, active, REDISMODULE_KEYTYPE_ZSET) ||
      !emq_require_type(ctx, pending, REDISMODULE_KEYTYPE_ZSET) ||
      !emq_require_counter(ctx, row, EMQ_WORD_ATTEMPTS, -1, &attempts)) {
    return REDISMODULE_OK;
  }
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  if (!emq_require_counter(ctx, stats, EMQ_WORD_RELEASED, 1, &released)) return REDISMODULE_OK;
  double lane = emq_row_lane(row);

  emq_zrem(ctx, active, active_name, id);
  emq_hincrby(ctx, row, row_name, EMQ_WORD_ATTEMPTS, attempts, -1);
  emq_set_state(ctx, row, row_name, EMQ_WORD_PENDING);
  emq_zadd(ctx, pending, pending_name, lane, id, 0);
  emq_hincrby(ctx, stats, stats_name, EMQ_WORD_RELEASED, released, 1);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
