/* Keys and rows read before the first write: see rows.h. */
#include "rows.h"

#include <stdio.h>
#include <string.h>

#include "lua_numbers.h"

RedisModuleKey *emq_open_read(RedisModuleCtx *ctx, RedisModuleString *name) {
  return RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
}

RedisModuleKey *emq_open_write(RedisModuleCtx *ctx, RedisModuleString *name) {
  return RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
}

int emq_holds_lease(RedisModuleKey *row, RedisModuleString *epoch) {
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_HASH) return 0;
  RedisModuleString *state = NULL, *held = NULL;
  RedisModule_HashGet(row, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_STATE), &state, emq_word(EMQ_WORD_LEASE_EPOCH),
                      &held, NULL);
  return emq_bytes_equal(state, "active", 6) && emq_str_equal(held, epoch);
}

RedisModuleKey *emq_open_held_row(RedisModuleCtx *ctx, RedisModuleString *row_name, RedisModuleString *epoch) {
  RedisModuleKey *row = emq_open_write(ctx, row_name);
  if (!emq_require_type(ctx, row, REDISMODULE_KEYTYPE_HASH)) return NULL;
  if (!emq_holds_lease(row, epoch)) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return NULL;
  }
  return row;
}

int emq_row_lane(RedisModuleKey *row, double *lane) {
  RedisModuleString *v = emq_hget(row, EMQ_WORD_LANE);
  *lane = 0;
  if (v == NULL) return 1;
  size_t len;
  const char *p = RedisModule_StringPtrLen(v, &len);
  return emq_is_lane(p, len, lane);
}

int emq_row_field_counter(RedisModuleKey *row, EmqWord field, long long *value) {
  return emq_row_counter(emq_hget(row, field), value);
}

int emq_reply_malformed(RedisModuleCtx *ctx, RedisModuleString *row_name, EmqWord field, const char *rule) {
  size_t rlen, flen;
  const char *r = RedisModule_StringPtrLen(row_name, &rlen);
  const char *f = RedisModule_StringPtrLen(emq_word(field), &flen);
  const size_t size = rlen + flen + strlen(rule) + 48;
  char *text = RedisModule_PoolAlloc(ctx, size);
  snprintf(text, size, "EMQROW %.*s %.*s is not %s; nothing was written", (int)rlen, r, (int)flen, f, rule);
  return RedisModule_ReplyWithError(ctx, text);
}

RedisModuleString *emq_row_key(RedisModuleCtx *ctx, RedisModuleString *root, RedisModuleString *id) {
  /* Built in place and created once: one allocation for the name. */
  size_t rlen, ilen;
  const char *r = RedisModule_StringPtrLen(root, &rlen), *i = RedisModule_StringPtrLen(id, &ilen);
  char stack[256];
  char *name = rlen + ilen <= sizeof stack ? stack : RedisModule_PoolAlloc(ctx, rlen + ilen);
  memcpy(name, r, rlen);
  memcpy(name + rlen, i, ilen);
  return RedisModule_CreateString(ctx, name, rlen + ilen);
}

RedisModuleString *emq_hget(RedisModuleKey *key, EmqWord field) {
  if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_HASH) return NULL;
  RedisModuleString *value = NULL;
  RedisModule_HashGet(key, REDISMODULE_HASH_NONE, emq_word(field), &value, NULL);
  return value;
}

int emq_require_type(RedisModuleCtx *ctx, RedisModuleKey *key, int type) {
  int t = RedisModule_KeyType(key);
  if (t == REDISMODULE_KEYTYPE_EMPTY || t == type) return 1;
  RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
  return 0;
}

int emq_stats_counter(RedisModuleKey *stats, EmqWord field, long long *value) {
  *value = 0;
  const int type = RedisModule_KeyType(stats);
  if (type == REDISMODULE_KEYTYPE_EMPTY) return 1;
  return type == REDISMODULE_KEYTYPE_HASH && emq_row_counter(emq_hget(stats, field), value);
}

int emq_row_counter(RedisModuleString *value, long long *out) {
  *out = 0;
  if (value == NULL) return 1;
  size_t len;
  const char *p = RedisModule_StringPtrLen(value, &len);
  return emq_is_counter(p, len, out);
}

int emq_is_row(RedisModuleKey *row) {
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_HASH) return 0;
  long long n;
  return emq_row_counter(emq_hget(row, EMQ_WORD_ATTEMPTS), &n) &&
         emq_row_counter(emq_hget(row, EMQ_WORD_LEASE_EPOCH), &n);
}
