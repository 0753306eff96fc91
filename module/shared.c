/* What the six EMQ.* transitions share: see shared.h. */
#include "shared.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMQ_WIRE_KEY "{emq}:version"
#define EMQ_WIRE "emq/1"

static const char *role_suffix(EmqKeyRole role) {
  switch (role) {
    case EMQ_KEY_ROW:
    case EMQ_KEY_ROW_ROOT: return "job:";
    case EMQ_KEY_PENDING: return "pending";
    case EMQ_KEY_ACTIVE: return "active";
    case EMQ_KEY_DELAYED: return "delayed";
    case EMQ_KEY_DEAD: return "dead";
    case EMQ_KEY_META: return "meta";
    case EMQ_KEY_STATS: return "stats";
  }
  return "";
}

static int reply_layout(RedisModuleCtx *ctx, const char *fmt, const char *name, int pos, const char *what) {
  char text[256];
  snprintf(text, sizeof text, fmt, pos, name, what);
  return RedisModule_ReplyWithError(ctx, text);
}

/* Splits emq:{q}:<rest>; 0 when the key has not that shape. */
static int split_key(const char *k, size_t len, const char **q, size_t *qlen, const char **rest, size_t *restlen) {
  if (len < 8 || memcmp(k, "emq:{", 5) != 0) return 0;
  const char *close = memchr(k + 5, '}', len - 5);
  if (close == NULL || close == k + 5) return 0;
  size_t after = (size_t)(close - k) + 1;
  if (after >= len || k[after] != ':') return 0;
  *q = k + 5;
  *qlen = (size_t)(close - (k + 5));
  *rest = k + after + 1;
  *restlen = len - after - 1;
  return 1;
}

static int check_layout(RedisModuleCtx *ctx, const EmqTransition *t, const EmqCall *call) {
  const char *q0 = NULL;
  size_t q0len = 0;
  for (int i = 0; i < t->num_keys; ++i) {
    size_t len, qlen, restlen;
    const char *k = RedisModule_StringPtrLen(call->keys[i], &len);
    const char *q, *rest;
    const char *suffix = role_suffix(t->roles[i]);
    size_t slen = strlen(suffix);
    int ok = split_key(k, len, &q, &qlen, &rest, &restlen) && restlen >= slen && memcmp(rest, suffix, slen) == 0;
    if (ok && t->roles[i] == EMQ_KEY_ROW) {
      size_t idlen;
      const char *id = RedisModule_StringPtrLen(call->args[0], &idlen);
      ok = restlen == slen + idlen && memcmp(rest + slen, id, idlen) == 0;
      if (!ok) return reply_layout(ctx, "EMQLAYOUT KEYS[%d] of %s must be emq:{q}:%s<id>, the row of ARGV[1]",
                                   t->name, i + 1, suffix);
    } else if (ok) {
      ok = restlen == slen;
    }
    if (!ok) return reply_layout(ctx, "EMQLAYOUT KEYS[%d] of %s must be emq:{q}:%s", t->name, i + 1, suffix);
    if (i == 0) {
      q0 = q;
      q0len = qlen;
    } else if (qlen != q0len || memcmp(q, q0, qlen) != 0) {
      return reply_layout(ctx, "EMQLAYOUT KEYS[%d] of %s names another queue than KEYS[1]%s", t->name, i + 1, "");
    }
  }
  return -1;
}

static int check_wire(RedisModuleCtx *ctx) {
  static RedisModuleString *wire_key = NULL;
  if (wire_key == NULL) wire_key = RedisModule_CreateString(NULL, EMQ_WIRE_KEY, strlen(EMQ_WIRE_KEY));
  RedisModuleKey *k = RedisModule_OpenKey(ctx, wire_key, REDISMODULE_READ);
  int type = RedisModule_KeyType(k);
  if (type == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithError(ctx, "EMQWIRE " EMQ_WIRE_KEY " is not set: connect with an emq/1 executor, "
                                           "which sets it, before the first transition");
  }
  size_t len = 0;
  const char *held = type == REDISMODULE_KEYTYPE_STRING ? RedisModule_StringDMA(k, &len, REDISMODULE_READ) : "";
  if (type == REDISMODULE_KEYTYPE_STRING && len == strlen(EMQ_WIRE) && memcmp(held, EMQ_WIRE, len) == 0) {
    RedisModule_CloseKey(k);
    return -1;
  }
  char text[160];
  snprintf(text, sizeof text, "EMQWIRE " EMQ_WIRE_KEY " holds '%.*s', not '" EMQ_WIRE
           "': this server speaks another EchoMQ wire; use a separate database", (int)(len > 64 ? 64 : len), held);
  RedisModule_CloseKey(k);
  return RedisModule_ReplyWithError(ctx, text);
}

int emq_begin(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t, EmqCall *call) {
  /* Every string, key handle and value read is released when the command
   * returns, on every path. */
  RedisModule_AutoMemory(ctx);
  if (argc < 2) {
    RedisModule_WrongArity(ctx);
    return 0;
  }
  long long numkeys;
  size_t nlen;
  const char *n = RedisModule_StringPtrLen(argv[1], &nlen);
  if (!emq_strict_ll(n, nlen, &numkeys) || numkeys != t->num_keys || numkeys > argc - 2) {
    char text[128];
    snprintf(text, sizeof text, "EMQLAYOUT %s takes numkeys %d and %d keys", t->name, t->num_keys, t->num_keys);
    RedisModule_ReplyWithError(ctx, text);
    return 0;
  }
  call->ctx = ctx;
  call->keys = argv + 2;
  call->args = argv + 2 + numkeys;
  call->num_args = argc - 2 - (int)numkeys;
  if (call->num_args < t->min_args) {
    RedisModule_WrongArity(ctx);
    return 0;
  }
  if (check_layout(ctx, t, call) != -1) return 0;
  if (check_wire(ctx) != -1) return 0;
  return 1;
}

const char *emq_arg(const EmqCall *call, int i, size_t *len) {
  if (i < 1 || i > call->num_args) {
    *len = 0;
    return NULL;
  }
  return RedisModule_StringPtrLen(call->args[i - 1], len);
}

int emq_int_arg(const EmqCall *call, int i, int allow_minus, double min, double max, const char *error,
                double *out) {
  size_t len;
  const char *s = emq_arg(call, i, &len);
  if (emq_matches_int(s, len, allow_minus) && emq_lua_tonumber(s, len, out) && *out >= min && *out <= max) return 1;
  RedisModule_ReplyWithError(call->ctx, error);
  return 0;
}

int emq_job_id_arg(const EmqCall *call, int i) {
  size_t len;
  const char *s = emq_arg(call, i, &len);
  if (s != NULL && len >= 3 && memcmp(s, "JOB", 3) == 0) return 1;
  RedisModule_ReplyWithError(call->ctx, "EMQKIND job id must be JOB-namespaced");
  return 0;
}

int emq_matches_int(const char *s, size_t len, int allow_minus) {
  if (s == NULL) return 0;
  size_t i = 0;
  if (allow_minus && len > 0 && s[0] == '-') i = 1;
  if (i == len) return 0;
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
  }
  return 1;
}

/* Lua 5.1's tonumber on a string: C's strtod on the bytes up to the first
 * NUL, a hexadecimal integer when strtod stops at an x, then nothing but
 * white space. */
int emq_lua_tonumber(const char *s, size_t len, double *out) {
  if (s == NULL) return 0;
  char buf[128];
  const char *nul = memchr(s, '\0', len);
  size_t n = nul ? (size_t)(nul - s) : len;
  /* The server's allocator, as for every value it holds: it never returns
   * NULL (the server stops on out of memory). */
  char *copy = n < sizeof buf ? buf : RedisModule_Alloc(n + 1);
  memcpy(copy, s, n);
  copy[n] = '\0';
  char *end;
  double d = strtod(copy, &end);
  int ok = end != copy;
  if (ok && (*end == 'x' || *end == 'X')) d = (double)strtoul(copy, &end, 16);
  while (ok && (*end == ' ' || (*end >= '\t' && *end <= '\r'))) ++end;
  ok = ok && *end == '\0';
  if (copy != buf) RedisModule_Free(copy);
  if (ok) *out = d;
  return ok;
}

/* The server's string-to-integer rule: no sign but a leading minus, no
 * leading zero, no white space, within a long long. */
int emq_strict_ll(const char *s, size_t len, long long *out) {
  if (s == NULL || len == 0 || len > 20) return 0;
  if (len == 1 && s[0] == '0') {
    *out = 0;
    return 1;
  }
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == len || s[i] < '1' || s[i] > '9') return 0;
  unsigned long long v = 0;
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (ULLONG_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  if (s[0] == '-') {
    if (v > (unsigned long long)LLONG_MAX + 1) return 0;
    *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
  } else {
    if (v > (unsigned long long)LLONG_MAX) return 0;
    *out = (long long)v;
  }
  return 1;
}

int emq_bytes_equal(RedisModuleString *a, const char *b, size_t blen) {
  if (a == NULL || b == NULL) return 0;
  size_t alen;
  const char *ap = RedisModule_StringPtrLen(a, &alen);
  return alen == blen && memcmp(ap, b, blen) == 0;
}

int emq_str_equal(RedisModuleString *a, RedisModuleString *b) {
  if (b == NULL) return 0;
  size_t blen;
  const char *bp = RedisModule_StringPtrLen(b, &blen);
  return emq_bytes_equal(a, bp, blen);
}

static RedisModuleString *words[EMQ_WORD_COUNT];

int emq_create_words(void) {
  static const char *const text[EMQ_WORD_COUNT] = {
      "state",  "attempts", "lease_epoch", "payload", "lane",    "failures", "error",
      "result", "paused",   "claimed",     "retried", "released", "pending", "active",
      "delayed", "dead",    "completed",   "0",       ""};
  for (int i = 0; i < EMQ_WORD_COUNT; ++i) {
    /* No context: the strings outlive every call, as long as the module. */
    if (words[i] == NULL) words[i] = RedisModule_CreateString(NULL, text[i], strlen(text[i]));
    if (words[i] == NULL) return REDISMODULE_ERR;
  }
  return REDISMODULE_OK;
}

RedisModuleString *emq_word(EmqWord word) { return words[word]; }

size_t emq_format_ll(char buf[24], long long value) {
  char digits[24];
  size_t n = 0;
  /* In unsigned arithmetic, so that LLONG_MIN has a magnitude. */
  unsigned long long v = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t len = 0;
  if (value < 0) buf[len++] = '-';
  while (n > 0) buf[len++] = digits[--n];
  buf[len] = '\0';
  return len;
}

size_t emq_format_score(char buf[40], double score) {
  /* Below 1e17 an integral value has at most 17 digits, which "%.17g"
   * writes as a plain integer; -0 keeps its sign through printf. */
  if (score > -1e17 && score < 1e17 && score == (double)(long long)score && !(score == 0 && signbit(score))) {
    return emq_format_ll(buf, (long long)score);
  }
  return (size_t)snprintf(buf, 40, "%.17g", score);
}

int emq_reply_error(RedisModuleCtx *ctx, const char *text) { return RedisModule_ReplyWithError(ctx, text); }

RedisModuleKey *emq_open_read(RedisModuleCtx *ctx, RedisModuleString *name) {
  return RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
}

RedisModuleKey *emq_open_write(RedisModuleCtx *ctx, RedisModuleString *name) {
  return RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
}

int emq_holds_lease(RedisModuleKey *row, RedisModuleString *epoch) {
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_HASH) return 0;
  RedisModuleString *state = NULL, *held = NULL;
  RedisModule_HashGet(row, REDISMODULE_HASH_NONE, words[EMQ_WORD_STATE], &state, words[EMQ_WORD_LEASE_EPOCH], &held,
                      NULL);
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
  return emq_matches_int(p, len, 1) && emq_lua_tonumber(p, len, lane) && *lane >= -1000 && *lane <= 1000;
}

int emq_row_field_counter(RedisModuleKey *row, EmqWord field, long long *value) {
  return emq_row_counter(emq_hget(row, field), value);
}

int emq_reply_malformed(RedisModuleCtx *ctx, RedisModuleString *row_name, EmqWord field, const char *rule) {
  size_t rlen, flen;
  const char *r = RedisModule_StringPtrLen(row_name, &rlen);
  const char *f = RedisModule_StringPtrLen(words[field], &flen);
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
  RedisModule_HashGet(key, REDISMODULE_HASH_NONE, words[field], &value, NULL);
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

void emq_count(RedisModuleCtx *ctx, RedisModuleKey *stats, RedisModuleString *stats_name, EmqWord field, int counted,
               long long current, long long n, const char *who) {
  if (n == 0) return;
  if (counted) {
    emq_hincrby(ctx, stats, stats_name, field, current, n);
    return;
  }
  size_t slen, flen;
  const char *s = RedisModule_StringPtrLen(stats_name, &slen);
  const char *f = RedisModule_StringPtrLen(words[field], &flen);
  RedisModule_Log(ctx, "warning",
                  "emq %s: %.*s %.*s is not an integer counter; %lld not counted, the field left in place for an "
                  "operator",
                  who, (int)slen, s, (int)flen, f, n);
}

int emq_row_counter(RedisModuleString *value, long long *out) {
  *out = 0;
  if (value == NULL) return 1;
  size_t len;
  const char *p = RedisModule_StringPtrLen(value, &len);
  /* The script's pattern and bound, and the stricter rule HINCRBY then
   * applies (no leading zero, no -0): a row the script would pass here
   * and then fail on half-way is skipped instead. */
  return emq_matches_int(p, len, 1) && len <= 18 && emq_strict_ll(p, len, out);
}

int emq_is_row(RedisModuleKey *row) {
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_HASH) return 0;
  long long n;
  return emq_row_counter(emq_hget(row, EMQ_WORD_ATTEMPTS), &n) &&
         emq_row_counter(emq_hget(row, EMQ_WORD_LEASE_EPOCH), &n);
}

void emq_changed(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *name) {
  RedisModule_SignalModifiedKey(ctx, name);
  RedisModule_NotifyKeyspaceEvent(ctx, type, event, name);
}

void emq_hset(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int pairs, const EmqWord *fields,
              RedisModuleString **values) {
  /* One HashSet and one Replicate for the whole HSET: both take their
   * pairs as arguments, and the transitions set three at most. */
  const int f = REDISMODULE_HASH_NONE;
  RedisModuleString *f0 = words[fields[0]], *f1 = pairs > 1 ? words[fields[1]] : NULL,
                    *f2 = pairs > 2 ? words[fields[2]] : NULL;
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

void emq_set_state(RedisModuleCtx *ctx, RedisModuleKey *row, RedisModuleString *row_name, EmqWord state) {
  static const EmqWord field = EMQ_WORD_STATE;
  RedisModuleString *value = words[state];
  emq_hset(ctx, row, row_name, 1, &field, &value);
}

long long emq_hincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, EmqWord field,
                      long long current, long long delta) {
  const long long n = current + delta;
  char buf[24];
  const size_t len = emq_format_ll(buf, n);
  RedisModule_HashSet(key, REDISMODULE_HASH_NONE, words[field], RedisModule_CreateString(ctx, buf, len), NULL);
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hincrby", name);
  RedisModule_Replicate(ctx, "HINCRBY", "ssl", name, words[field], delta);
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

/* ZREM and ZPOPMIN end with a "del" event when they empty the set (the
 * module API deletes the empty key without one). */
static void notify_if_emptied(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name) {
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", name);
  }
}

void emq_zrem(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id) {
  int deleted = 0;
  if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_ZSET) RedisModule_ZsetRem(key, id, &deleted);
  if (!deleted) return;
  emq_changed(ctx, REDISMODULE_NOTIFY_ZSET, "zrem", name);
  notify_if_emptied(ctx, key, name);
  RedisModule_Replicate(ctx, "ZREM", "ss", name, id);
}

int emq_zpopmin(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int count,
                RedisModuleString **ids) {
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

void emq_pexpire(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, mstime_t at_ms) {
  RedisModule_SetAbsExpire(key, at_ms);
  emq_changed(ctx, REDISMODULE_NOTIFY_GENERIC, "expire", name);
  /* As the server propagates a script's PEXPIRE: at an absolute time. */
  RedisModule_Replicate(ctx, "PEXPIREAT", "sl", name, (long long)at_ms);
}

int emq_may_touch_rows(RedisModuleCtx *ctx, const char *command, RedisModuleString **rows, size_t n, int write) {
  if (n == 0) return 1;
  RedisModuleString *name = RedisModule_GetCurrentUserName(ctx);
  /* No user: the server's own client, which may touch every key. */
  RedisModuleUser *user = name != NULL ? RedisModule_GetModuleUserFromUserName(name) : NULL;
  if (user == NULL) return 1;
  const int flags = (int)(REDISMODULE_CMD_KEY_ACCESS | (write ? REDISMODULE_CMD_KEY_UPDATE : 0));
  size_t i = 0;
  while (i < n && RedisModule_ACLCheckKeyPermissions(user, rows[i], flags) == REDISMODULE_OK) ++i;
  if (i < n) RedisModule_ACLAddLogEntry(ctx, user, rows[i], REDISMODULE_ACL_LOG_KEY);
  RedisModule_FreeModuleUser(user);
  if (i == n) return 1;
  char text[128];
  snprintf(text, sizeof text, "ERR ACL failure in %s: No permissions to access a key", command);
  RedisModule_ReplyWithError(ctx, text);
  return 0;
}

mstime_t emq_now_ms(void) { return RedisModule_Milliseconds(); }
