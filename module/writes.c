/* The writes, each as the script's command: see writes.h. */
#include "writes.h"

#include <stdio.h>
#include <string.h>

#include "rows.h"

void emq_changed(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *name) {
  RedisModule_SignalModifiedKey(ctx, name);
  RedisModule_NotifyKeyspaceEvent(ctx, type, event, name);
}

void emq_hset(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int pairs, const EmqWord *fields,
              RedisModuleString **values) {
  /* One HashSet and one Replicate for the whole HSET: both take their
   * pairs as arguments, and the transitions set three at most. */
  const int f = REDISMODULE_HASH_NONE;
  RedisModuleString *f0 = emq_word(fields[0]), *f1 = pairs > 1 ? emq_word(fields[1]) : NULL,
                    *f2 = pairs > 2 ? emq_word(fields[2]) : NULL;
  switch (pairs) {
    case 1:
      RedisModule_HashSet(key, f, f0, values[0], NULL);
      RedisModule_Replicate(ctx, "HSET", "sss", name, f0, values[0]);
      break;
    case 2:
      RedisModule_HashSet(key, f, f0, values[0], f1, values[1], NULL);
      RedisModule_Replicate(ctx, "HSET", "sssss", name, f0, values[0], f1, values[1]);
      break;
    default:
      RedisModule_HashSet(key, f, f0, values[0], f1, values[1], f2, values[2], NULL);
      RedisModule_Replicate(ctx, "HSET", "sssssss", name, f0, values[0], f1, values[1], f2, values[2]);
  }
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hset", name);
}

void emq_hset_pairs(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString **pairs,
                    int n) {
  RedisModuleString **argv = RedisModule_PoolAlloc(ctx, sizeof *argv * (size_t)(1 + 2 * n));
  argv[0] = name;
  for (int i = 0; i < n; ++i) {
    RedisModule_HashSet(key, REDISMODULE_HASH_NONE, pairs[2 * i], pairs[2 * i + 1], NULL);
    argv[1 + 2 * i] = pairs[2 * i];
    argv[2 + 2 * i] = pairs[2 * i + 1];
  }
  RedisModule_Replicate(ctx, "HSET", "v", argv, (size_t)(1 + 2 * n));
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hset", name);
}

void emq_set_state(RedisModuleCtx *ctx, RedisModuleKey *row, RedisModuleString *row_name, EmqWord state) {
  static const EmqWord field = EMQ_WORD_STATE;
  RedisModuleString *value = emq_word(state);
  emq_hset(ctx, row, row_name, 1, &field, &value);
}

long long emq_hincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, EmqWord field,
                      long long current, long long delta) {
  const long long n = current + delta;
  char buf[24];
  const size_t len = emq_format_ll(buf, n);
  RedisModule_HashSet(key, REDISMODULE_HASH_NONE, emq_word(field), RedisModule_CreateString(ctx, buf, len), NULL);
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hincrby", name);
  RedisModule_Replicate(ctx, "HINCRBY", "ssl", name, emq_word(field), delta);
  return n;
}

void emq_zadd(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, double score, RedisModuleString *id,
              int xx) {
  int flags = xx ? REDISMODULE_ZADD_XX : 0;
  RedisModule_ZsetAdd(key, score, id, &flags);
  /* ZADD is silent, and propagates nothing, when the score is unchanged. */
  if (!(flags & (REDISMODULE_ZADD_ADDED | REDISMODULE_ZADD_UPDATED))) return;
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zadd", name);
  char buf[40];
  const size_t blen = emq_format_score(buf, score);
  if (xx) {
    RedisModule_Replicate(ctx, "ZADD", "scbs", name, "XX", buf, blen, id);
  } else {
    RedisModule_Replicate(ctx, "ZADD", "sbs", name, buf, blen, id);
  }
}

void emq_zadd_batch_begin(RedisModuleCtx *ctx, EmqZaddBatch *b, RedisModuleKey *key, RedisModuleString *name,
                          double score, size_t cap) {
  char buf[40];
  b->key = key;
  b->name = name;
  b->score = score;
  b->score_text = RedisModule_CreateString(ctx, buf, emq_format_score(buf, score));
  b->cap = 1 + 2 * cap;
  b->argv = RedisModule_PoolAlloc(ctx, sizeof *b->argv * b->cap);
  b->argv[0] = name;
  b->len = 1;
}

void emq_append(RedisModuleCtx *ctx, RedisModuleString ***items, size_t *n, size_t *cap, RedisModuleString *item) {
  if (*n == *cap) {
    const size_t more = *cap ? 2 * *cap : 32;
    RedisModuleString **grown = RedisModule_PoolAlloc(ctx, sizeof *grown * more);
    if (*n) memcpy(grown, *items, sizeof *grown * *n);
    *items = grown;
    *cap = more;
  }
  (*items)[(*n)++] = item;
}

void emq_zadd_batched(RedisModuleCtx *ctx, EmqZaddBatch *b, RedisModuleString *id) {
  int flags = 0;
  RedisModule_ZsetAdd(b->key, b->score, id, &flags);
  if (!(flags & (REDISMODULE_ZADD_ADDED | REDISMODULE_ZADD_UPDATED))) return;
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zadd", b->name);
  emq_append(ctx, &b->argv, &b->len, &b->cap, b->score_text);
  emq_append(ctx, &b->argv, &b->len, &b->cap, id);
}

void emq_zadd_batch_end(RedisModuleCtx *ctx, EmqZaddBatch *b) {
  if (b->len > 1) RedisModule_Replicate(ctx, "ZADD", "v", b->argv, b->len);
}

/* ZREM and ZPOPMIN end with a "del" event when they empty the set (the
 * module API deletes the empty key without one). */
static void notify_if_emptied(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", name);
  }
}

int emq_zrem_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id) {
  int deleted = 0;
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_ZSET) RedisModule_ZsetRem(key, id, &deleted);
  if (!deleted) return 0;
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zrem", name);
  notify_if_emptied(ctx, key, name);
  return 1;
}

void emq_zrem(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id) {
  if (emq_zrem_unreplicated(ctx, key, name, id)) RedisModule_Replicate(ctx, "ZREM", "ss", name, id);
}

int emq_zpopmin(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int count, RedisModuleString **ids) {
  int n = 0;
  if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_ZSET) return 0;
  if (RedisModule_ZsetFirstInScoreRange(key, -1.0 / 0.0, 1.0 / 0.0, 0, 0) == REDISMODULE_OK) {
    while (n < count && !RedisModule_ZsetRangeEndReached(key)) {
      double score;
      ids[n++] = RedisModule_ZsetRangeCurrentElement(key, &score);
      RedisModule_ZsetRangeNext(key);
    }
    RedisModule_ZsetRangeStop(key);
  }
  if (n == 0) return 0;
  RedisModuleString **argv = RedisModule_PoolAlloc(ctx, sizeof *argv * (size_t)(1 + n));
  argv[0] = name;
  for (int i = 0; i < n; ++i) {
    int deleted;
    RedisModule_ZsetRem(key, ids[i], &deleted);
    argv[1 + i] = ids[i];
  }
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zpopmin", name);
  notify_if_emptied(ctx, key, name);
  /* The popped ids by name: the replica removes exactly these. */
  RedisModule_Replicate(ctx, "ZREM", "v", argv, (size_t)(1 + n));
  return n;
}

void emq_del(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) return;
  RedisModule_DeleteKey(key);
  emq_changed(ctx, REDISMODULE_NOTIFY_GENERIC, "del", name);
  RedisModule_Replicate(ctx, "DEL", "s", name);
}

void emq_del_keys(RedisModuleCtx *ctx, RedisModuleString **names, int n) {
  int deleted = 0;
  for (int i = 0; i < n; ++i) {
    RedisModuleKey *key = emq_open_write(ctx, names[i]);
    if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) continue;
    RedisModule_DeleteKey(key);
    emq_changed(ctx, REDISMODULE_NOTIFY_GENERIC, "del", names[i]);
    ++deleted;
  }
  if (deleted > 0) RedisModule_Replicate(ctx, "DEL", "v", names, (size_t)n);
}

void emq_persist(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  if (RedisModule_GetAbsExpire(key) == REDISMODULE_NO_EXPIRE) return;
  RedisModule_SetAbsExpire(key, REDISMODULE_NO_EXPIRE);
  emq_changed(ctx, REDISMODULE_NOTIFY_GENERIC, "persist", name);
  RedisModule_Replicate(ctx, "PERSIST", "s", name);
}

void emq_pexpire(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, mstime_t at_ms) {
  RedisModule_SetAbsExpire(key, at_ms);
  emq_changed(ctx, REDISMODULE_NOTIFY_GENERIC, "expire", name);
  /* As the server propagates a script's PEXPIRE: at an absolute time. */
  RedisModule_Replicate(ctx, "PEXPIREAT", "sl", name, (long long)at_ms);
}

void emq_hdel(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int n, const EmqWord *fields) {
  if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_HASH) return;
  int deleted = 0;
  RedisModuleString *argv[8];
  argv[0] = name;
  for (int i = 0; i < n; ++i) {
    /* The module deletes a hash the moment it is empty; a field deleted
     * after that would make it anew. */
    if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_HASH) {
      deleted += RedisModule_HashSet(key, REDISMODULE_HASH_NONE, emq_word(fields[i]), REDISMODULE_HASH_DELETE, NULL);
    }
    argv[1 + i] = emq_word(fields[i]);
  }
  if (deleted == 0) return;
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hdel", name);
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", name);
  }
  RedisModule_Replicate(ctx, "HDEL", "v", argv, (size_t)(1 + n));
}

double emq_zincrby_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, long long delta,
                                RedisModuleString *member) {
  int flags = 0;
  double score = 0;
  RedisModule_ZsetIncrby(key, (double)delta, member, &flags, &score);
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zincr", name);
  return score;
}

double emq_zincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, long long delta,
                   RedisModuleString *member) {
  const double score = emq_zincrby_unreplicated(ctx, key, name, delta, member);
  RedisModule_Replicate(ctx, "ZINCRBY", "sls", name, delta, member);
  return score;
}

void emq_rpush_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                            RedisModuleString *value) {
  RedisModule_ListPush(key, REDISMODULE_LIST_TAIL, value);
  emq_changed(ctx, REDISMODULE_NOTIFY_LIST, "rpush", name);
}

void emq_rpush(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *value) {
  emq_rpush_unreplicated(ctx, key, name, value);
  RedisModule_Replicate(ctx, "RPUSH", "ss", name, value);
}

void emq_lpop_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  RedisModule_ListPop(key, REDISMODULE_LIST_HEAD);
  emq_changed(ctx, REDISMODULE_NOTIFY_LIST, "lpop", name);
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", name);
  }
}

void emq_lpop(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  emq_lpop_unreplicated(ctx, key, name);
  RedisModule_Replicate(ctx, "LPOP", "s", name);
}

void emq_count(RedisModuleCtx *ctx, RedisModuleKey *stats, RedisModuleString *stats_name, EmqWord field, int counted,
               long long current, long long n, const char *who) {
  if (n == 0) return;
  if (counted) {
    emq_hincrby(ctx, stats, stats_name, field, current, n);
    return;
  }
  size_t slen, flen;
  const char *s = RedisModule_StringPtrLen(stats_name, &slen);
  const char *f = RedisModule_StringPtrLen(emq_word(field), &flen);
  RedisModule_Log(ctx, "warning",
                  "emq %s: %.*s %.*s is not an integer counter; %lld not counted, the field left in place for an "
                  "operator",
                  who, (int)slen, s, (int)flen, f, n);
}

void emq_emit(RedisModuleCtx *ctx, const EmqEvents *events, EmqWord event, RedisModuleString *id,
              RedisModuleString *attempt, RedisModuleString *error) {
  if (events->stream == NULL) return;
  RedisModuleString *fields[8] = {emq_word(EMQ_WORD_EVENT),   emq_word(event),
                                  emq_word(EMQ_WORD_ID),      id,
                                  emq_word(EMQ_WORD_ATTEMPT), attempt != NULL ? attempt : emq_word(EMQ_WORD_ZERO)};
  long pairs = 3;
  if (error != NULL) {
    size_t len;
    const char *text = RedisModule_StringPtrLen(error, &len);
    fields[6] = emq_word(EMQ_WORD_ERROR);
    fields[7] = len > EMQ_EVENT_TEXT ? RedisModule_CreateString(ctx, text, EMQ_EVENT_TEXT) : error;
    pairs = 4;
  }
  RedisModuleStreamID entry;
  if (RedisModule_StreamAdd(events->key, REDISMODULE_STREAM_ADD_AUTOID, &entry, fields, pairs) != REDISMODULE_OK) {
    /* Only a stream whose last id is the largest there is refuses an entry
     * this small; the script's XADD fails there too, after its writes. */
    RedisModule_Log(ctx, "warning", "emq: the events stream refused an entry: its last id is the largest there is");
    return;
  }
  /* XADD's order: its event, the trim and the trim's event, the key
   * signalled modified. */
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_STREAM, "xadd", events->stream);
  if (RedisModule_StreamTrimByLength(events->key, REDISMODULE_STREAM_TRIM_APPROX, events->len) > 0) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_STREAM, "xtrim", events->stream);
  }
  RedisModule_SignalModifiedKey(ctx, events->stream);
  /* What the server propagates for XADD MAXLEN ~ N *: the id it chose, and
   * the trim as the exact length it left, so that a replica and the AOF
   * hold the same entries under the same ids. */
  char text[48], kept[24];
  const size_t tlen = emq_format_stream_id(text, entry.ms, entry.seq);
  const size_t klen = emq_format_ll(kept, (long long)RedisModule_ValueLength(events->key));
  RedisModule_Replicate(ctx, "XADD", "sccbbv", events->stream, "MAXLEN", "=", kept, klen, text, tlen, fields,
                        (size_t)(2 * pairs));
}
