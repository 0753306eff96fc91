/* Unique jobs on the native executor: see unique.h. */
#include "unique.h"

#include <stdio.h>
#include <string.h>

#include "lua_numbers.h"
#include "rows.h"
#include "writes.h"

#define EMQ_MAX_KEY 128

/* Whether name is one of the words of list (string.gmatch(list, '%S+')). */
static int listed(const char *list, const char *name, size_t nlen) {
  const char *p = list;
  while (*p != '\0') {
    while (*p == ' ') ++p;
    const char *end = p;
    while (*end != '\0' && *end != ' ') ++end;
    if (end > p && (size_t)(end - p) == nlen && memcmp(p, name, nlen) == 0) return 1;
    p = end;
  }
  return 0;
}

static int is_name(const char *s, size_t len, const char *name) {
  return len == strlen(name) && memcmp(s, name, len) == 0;
}

/* '^[0-9A-Za-z_.:%-]+$' in at most 128 bytes. */
static int is_key(const char *s, size_t len) {
  if (len == 0 || len > EMQ_MAX_KEY) return 0;
  for (size_t i = 0; i < len; ++i) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' ||
          c == ':' || c == '-')) {
      return 0;
    }
  }
  return 1;
}

/* text is at most 199 bytes (the callers' buffers are 200). */
static int refuse(const EmqCall *call, const char *text) {
  char buf[sizeof "EMQARG " + 200];
  snprintf(buf, sizeof buf, "EMQARG %s", text);
  emq_reply_error(call->ctx, buf);
  return 0;
}

/* option_value for one pair; 0 once it has replied. */
static int option_value(const EmqCall *call, const char *name, size_t nlen, int i, EmqOptions *o) {
  size_t vlen;
  const char *v = emq_arg(call, i, &vlen);
  RedisModuleString *value = call->args[i - 1];
  double n;
  if (is_name(name, nlen, "lane")) {
    if (!emq_matches_int(v, vlen, 1) || !emq_lua_tonumber(v, vlen, &n) || n < -1000 || n > 1000)
      return refuse(call, "lane must be an integer in -1000..1000");
    o->has_lane = 1;
    o->lane = n;
  } else if (is_name(name, nlen, "due_ms")) {
    if (!emq_matches_int(v, vlen, 0) || !emq_lua_tonumber(v, vlen, &n) || n > 1e15)
      return refuse(call, "due_ms must be an integer in 0..1000000000000000 (epoch ms)");
    o->has_due = 1;
    o->due_ms = n;
  } else if (is_name(name, nlen, "unique")) {
    if (!is_key(v, vlen)) return refuse(call, "unique must be 1-128 bytes of [0-9A-Za-z_.:-]");
    o->unique = value;
  } else if (is_name(name, nlen, "unique_mode")) {
    static const char *const modes[] = {"finished", "started", "window", "replace"};
    o->unique_mode = NULL;
    for (int m = 0; m < 4; ++m) {
      if (is_name(v, vlen, modes[m])) o->unique_mode = modes[m];
    }
    if (o->unique_mode == NULL) return refuse(call, "unique_mode must be finished, started, window or replace");
  } else if (is_name(name, nlen, "unique_for_ms")) {
    if (!emq_matches_int(v, vlen, 0) || !emq_lua_tonumber(v, vlen, &n) || n < 1 || n > 1e12)
      return refuse(call, "unique_for_ms must be an integer in 1..1000000000000");
    o->unique_for_ms = n;
  } else if (is_name(name, nlen, "traceparent")) {
    if (vlen != 55) return refuse(call, "traceparent must be exactly 55 bytes");
    o->traceparent = value;
  } else if (is_name(name, nlen, "tracestate")) {
    if (vlen > 512) return refuse(call, "tracestate must be at most 512 bytes");
    o->tracestate = value;
  } else {
    /* group: the names were listed before their values were read. */
    if (!is_key(v, vlen)) return refuse(call, "group must be 1-128 bytes of [0-9A-Za-z_.:-]");
    o->group = value;
  }
  return 1;
}

int emq_options_read(const EmqCall *call, int first, int last, const char *allowed, const char *who, EmqOptions *o) {
  memset(o, 0, sizeof *o);
  if ((last - first + 1) % 2 != 0) return refuse(call, "enqueue options must be name value pairs");
  /* Names given so far, to refuse one given twice; each name is checked
   * before its value, and a name not known has been refused by then. */
  const char *seen[16];
  size_t seen_len[16];
  int num_seen = 0;
  for (int i = first; i + 1 <= last; i += 2) {
    size_t nlen;
    const char *name = emq_arg(call, i, &nlen);
    if (!listed(allowed, name, nlen)) {
      char text[200];
      if (listed(EMQ_ENQUEUE_OPTIONS, name, nlen)) {
        snprintf(text, sizeof text, "%.*s is not an option of %s", (int)nlen, name, who);
      } else {
        snprintf(text, sizeof text, "unknown enqueue option %.*s", (int)(nlen > 64 ? 64 : nlen), name);
      }
      return refuse(call, text);
    }
    for (int s = 0; s < num_seen; ++s) {
      if (seen_len[s] == nlen && memcmp(seen[s], name, nlen) == 0) {
        char text[200];
        snprintf(text, sizeof text, "enqueue option %.*s is given twice", (int)nlen, name);
        return refuse(call, text);
      }
    }
    if (!option_value(call, name, nlen, i + 1, o)) return 0;
    if (num_seen < 16) {
      seen[num_seen] = name;
      seen_len[num_seen++] = nlen;
    }
  }
  if ((o->unique_mode != NULL || o->unique_for_ms > 0) && o->unique == NULL)
    return refuse(call, "unique_mode and unique_for_ms need unique");
  if (o->unique_mode != NULL && strcmp(o->unique_mode, "window") == 0 && o->unique_for_ms == 0)
    return refuse(call, "unique_mode window needs unique_for_ms");
  if (o->unique_for_ms > 0 && o->unique_mode != NULL && strcmp(o->unique_mode, "window") != 0)
    return refuse(call, "unique_for_ms is only for unique_mode window");
  if (o->unique != NULL && o->unique_mode == NULL) o->unique_mode = o->unique_for_ms > 0 ? "window" : "finished";
  return 1;
}

static RedisModuleString *key_in(RedisModuleCtx *ctx, const char *queue, size_t qlen, const char *type,
                                 RedisModuleString *tail) {
  size_t tlen = 0;
  const char *t = tail != NULL ? RedisModule_StringPtrLen(tail, &tlen) : "";
  const size_t ylen = strlen(type);
  char *name = RedisModule_PoolAlloc(ctx, qlen + ylen + tlen + 1);
  memcpy(name, queue, qlen);
  memcpy(name + qlen, type, ylen);
  memcpy(name + qlen + ylen, t, tlen);
  return RedisModule_CreateString(ctx, name, qlen + ylen + tlen);
}

int emq_holder_of(RedisModuleCtx *ctx, const char *command, RedisModuleString *lock, RedisModuleString *key,
                  const char *queue, size_t qlen, int writes, RedisModuleString **holder, RedisModuleString **state) {
  RedisModuleKey *k = emq_open_read(ctx, lock);
  if (RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_STRING) {
    RedisModule_CloseKey(k);
    return 0;
  }
  size_t hlen;
  const char *h = RedisModule_StringDMA(k, &hlen, REDISMODULE_READ);
  const mstime_t ttl = RedisModule_GetAbsExpire(k);
  if (hlen < 3 || memcmp(h, "JOB", 3) != 0) {
    RedisModule_CloseKey(k);
    return 0;
  }
  *holder = RedisModule_CreateString(ctx, h, hlen);
  RedisModule_CloseKey(k);
  RedisModuleString *row_name = key_in(ctx, queue, qlen, "job:", *holder);
  if (!emq_may_touch_rows(ctx, command, &row_name, 1, writes ? EMQ_ROW_WRITE : (uint64_t)REDISMODULE_CMD_KEY_ACCESS)) {
    return -1;
  }
  RedisModuleKey *row = emq_open_read(ctx, row_name);
  const int hash = RedisModule_KeyType(row) == REDISMODULE_KEYTYPE_HASH;
  if (ttl != REDISMODULE_NO_EXPIRE) {
    RedisModuleString *s = hash ? emq_hget(row, EMQ_WORD_STATE) : NULL;
    *state = s != NULL ? s : emq_word(EMQ_WORD_GONE);
    RedisModule_CloseKey(row);
    return 1;
  }
  if (!hash) {
    RedisModule_CloseKey(row);
    return 0;
  }
  RedisModuleString *s = emq_hget(row, EMQ_WORD_STATE), *u = emq_hget(row, EMQ_WORD_UNIQUE),
                    *m = emq_hget(row, EMQ_WORD_UNIQUE_MODE);
  RedisModule_CloseKey(row);
  const int covered = emq_bytes_equal(s, "pending", 7) || emq_bytes_equal(s, "delayed", 7) ||
                      emq_bytes_equal(s, "waiting", 7) ||
                      (emq_bytes_equal(s, "active", 6) && !emq_bytes_equal(m, "started", 7));
  if (u == NULL || !emq_str_equal(u, key) || !covered) return 0;
  *state = s;
  return 1;
}

int emq_may_touch_stats(RedisModuleCtx *ctx, const char *command, const char *queue, size_t qlen) {
  RedisModuleString *stats_name = key_in(ctx, queue, qlen, "stats", NULL);
  return emq_may_touch_rows(ctx, command, &stats_name, 1, EMQ_ROW_WRITE);
}

void emq_count_unique(RedisModuleCtx *ctx, const char *queue, size_t qlen, EmqWord field, const char *who) {
  RedisModuleString *stats_name = key_in(ctx, queue, qlen, "stats", NULL);
  RedisModuleKey *stats = emq_open_write(ctx, stats_name);
  long long current;
  const int counted = emq_stats_counter(stats, field, &current);
  emq_count(ctx, stats, stats_name, field, counted, current, 1, who);
  RedisModule_CloseKey(stats);
}

RedisModuleString *emq_lock_of(RedisModuleCtx *ctx, RedisModuleString *uniq_root, RedisModuleString *key,
                               RedisModuleString *mode) {
  if (uniq_root == NULL || key == NULL || emq_bytes_equal(mode, "window", 6)) return NULL;
  size_t klen, rlen;
  const char *k = RedisModule_StringPtrLen(key, &klen);
  if (!is_key(k, klen)) return NULL;
  const char *r = RedisModule_StringPtrLen(uniq_root, &rlen);
  char *name = RedisModule_PoolAlloc(ctx, rlen + klen);
  memcpy(name, r, rlen);
  memcpy(name + rlen, k, klen);
  return RedisModule_CreateString(ctx, name, rlen + klen);
}

void emq_release_key(RedisModuleCtx *ctx, RedisModuleString *uniq_root, RedisModuleString *id, RedisModuleString *key,
                     RedisModuleString *mode) {
  RedisModuleString *lock = emq_lock_of(ctx, uniq_root, key, mode);
  if (lock == NULL || !emq_acl_allows(ctx, lock, REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_DELETE)) return;
  RedisModuleKey *k = emq_open_write(ctx, lock);
  size_t hlen, ilen;
  const char *id_bytes = RedisModule_StringPtrLen(id, &ilen);
  const char *h =
      RedisModule_KeyType(k) == REDISMODULE_KEYTYPE_STRING ? RedisModule_StringDMA(k, &hlen, REDISMODULE_READ) : NULL;
  if (h != NULL && hlen == ilen && memcmp(h, id_bytes, ilen) == 0) emq_del(ctx, k, lock);
  RedisModule_CloseKey(k);
}

void emq_take_lock(RedisModuleCtx *ctx, RedisModuleString *lock, RedisModuleString *id, const EmqOptions *o) {
  if (lock == NULL) return;
  /* The server's own SET ("!": replicated as the script's is), so that its
   * expiry, keyspace events and propagation are the script's. */
  if (o->unique_for_ms > 0) {
    char ms[24];
    const size_t len = emq_format_ll(ms, (long long)o->unique_for_ms);
    RedisModule_Call(ctx, "SET", "!sscb", lock, id, "PX", ms, len);
  } else {
    RedisModule_Call(ctx, "SET", "!ss", lock, id);
  }
}

int emq_reply_holder(RedisModuleCtx *ctx, long long code, RedisModuleString *holder, RedisModuleString *state) {
  RedisModule_ReplyWithArray(ctx, 3);
  RedisModule_ReplyWithLongLong(ctx, code);
  RedisModule_ReplyWithString(ctx, holder);
  return RedisModule_ReplyWithString(ctx, state);
}
