/* EMQ.RELEASE: the native twin of lua/release.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. */
#include "groups.h"
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_ACTIVE, EMQ_KEY_PENDING, EMQ_KEY_STATS};
static const EmqTransition kRelease = {
    "EMQ.RELEASE",
    kRoles,
    4,
    2,
    1,
    {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX, EMQ_KEY_ROT, EMQ_KEY_GROUPS, EMQ_KEY_GWAIT},
    7};

int emq_release(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kRelease, &call)) return REDISMODULE_OK;
  EmqGroups groups;
  if (emq_groups_begin(ctx, &call, &kRelease, &groups, NULL) < 0) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *active_name = call.keys[1], *pending_name = call.keys[2],
                    *stats_name = call.keys[3];
  RedisModuleString *id = call.args[0], *epoch = call.args[1];
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;

  RedisModuleKey *row = emq_open_held_row(ctx, row_name, epoch);
  if (row == NULL) return REDISMODULE_OK;
  long long attempts, released;
  double lane;
  if (!emq_row_field_counter(row, EMQ_WORD_ATTEMPTS, &attempts)) {
    return emq_reply_malformed(ctx, row_name, EMQ_WORD_ATTEMPTS, EMQ_RULE_COUNTER);
  }
  if (!emq_row_lane(row, &lane)) return emq_reply_malformed(ctx, row_name, EMQ_WORD_LANE, EMQ_RULE_LANE);
  RedisModuleKey *active = emq_open_write(ctx, active_name);
  RedisModuleKey *pending = emq_open_write(ctx, pending_name);
  if (!emq_require_type(ctx, active, REDISMODULE_KEYTYPE_ZSET) ||
      !emq_require_type(ctx, pending, REDISMODULE_KEYTYPE_ZSET)) {
    return REDISMODULE_OK;
  }
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  const int counted = emq_stats_counter(stats, EMQ_WORD_RELEASED, &released);
  groups.active = active;
  RedisModuleString *group = emq_group_of(&groups, emq_hget(row, EMQ_WORD_GROUP));
  if (groups.refused) return REDISMODULE_OK;

  emq_zrem(ctx, active, active_name, id);
  emq_hincrby(ctx, row, row_name, EMQ_WORD_ATTEMPTS, attempts, -1);
  emq_set_state(ctx, row, row_name, EMQ_WORD_PENDING);
  if (group != NULL) {
    emq_group_to(&groups, group, id, lane);
  } else {
    emq_zadd(ctx, pending, pending_name, lane, id, 0);
  }
  emq_emit(ctx, &call.events, EMQ_WORD_PENDING, id, emq_hget(row, EMQ_WORD_ATTEMPTS), NULL);
  emq_count(ctx, stats, stats_name, EMQ_WORD_RELEASED, counted, released, 1, "release");
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
