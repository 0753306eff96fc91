/* EMQ.ENQUEUE: the native twin of lua/enqueue.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua. */
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_PENDING};
static const EmqTransition kEnqueue = {"EMQ.ENQUEUE", kRoles, 2, 2, 1, 0};

int emq_enqueue(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kEnqueue, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0], *pending_name = call.keys[1];
  RedisModuleString *id = call.args[0], *payload = call.args[1];
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;

  RedisModuleKey *row = emq_open_write(ctx, row_name);
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_EMPTY) return RedisModule_ReplyWithLongLong(ctx, 0);
  RedisModuleKey *pending = emq_open_write(ctx, pending_name);
  if (!emq_require_type(ctx, pending, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;

  const EmqWord fields[] = {EMQ_WORD_STATE, EMQ_WORD_ATTEMPTS, EMQ_WORD_PAYLOAD};
  RedisModuleString *values[] = {emq_word(EMQ_WORD_PENDING), emq_word(EMQ_WORD_ZERO), payload};
  emq_hset(ctx, row, row_name, 3, fields, values);
  emq_zadd(ctx, pending, pending_name, 0, id, 0);
  emq_emit(ctx, &call.events, EMQ_WORD_PENDING, id, NULL, NULL, NULL);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
