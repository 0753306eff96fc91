/* EMQ.ENQUEUE: the native twin of lua/enqueue.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua: the seed's enqueue with only id
 * and payload, and the optioned enqueue with named options after them
 * (lane, due_ms, unique and its mode and window, the trace context).
 *
 * Where the C differs in how, not what: the optional KEYS are told apart
 * by their shape for the layout check, then read by position as the
 * script reads them; the rows and the stats key it finds beside the row
 * key are checked against the caller's ACL before they are touched; a
 * set of the wrong type is refused before the row is written. */
#include <stdio.h>
#include <string.h>

#include "groups.h"
#include "transitions.h"
#include "unique.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW, EMQ_KEY_PENDING};
static const EmqTransition kEnqueue = {
    "EMQ.ENQUEUE",
    kRoles,
    2,
    2,
    1,
    {EMQ_KEY_DELAYED, EMQ_KEY_LOCK, EMQ_KEY_GQ, EMQ_KEY_GRP, EMQ_KEY_GACT, EMQ_KEY_GIDX, EMQ_KEY_ROT, EMQ_KEY_GROUPS},
    8};

/* The group option's six KEYS, in their order: queue + name (+ g for the
 * first three). */
static const char *const kGroupKeys[] = {"gq:", "grp:", "gact:", "gidx", "rot", "groups"};

/* KEYS[at..at+5] are exactly the group's six (the script's check), then
 * each of the type it must be: 1, else it has replied. */
static int group_keys(const EmqCall *call, int at, const EmqOptions *o, const char *queue, size_t qlen) {
  size_t glen;
  const char *g = RedisModule_StringPtrLen(o->group, &glen);
  for (int i = 0; i < 6; ++i) {
    size_t len;
    const char *k = RedisModule_StringPtrLen(call->keys[at - 1 + i], &len);
    const size_t nlen = strlen(kGroupKeys[i]), extra = i < 3 ? glen : 0;
    if (len != qlen + nlen + extra || memcmp(k, queue, qlen) != 0 || memcmp(k + qlen, kGroupKeys[i], nlen) != 0 ||
        memcmp(k + qlen + nlen, g, extra) != 0) {
      char text[400];
      snprintf(text, sizeof text, "EMQARG KEYS[%d] must be %.*s%s%.*s", at + i, (int)qlen, queue, kGroupKeys[i],
               (int)extra, g);
      emq_reply_error(call->ctx, text);
      return 0;
    }
  }
  static const int kinds[] = {REDISMODULE_KEYTYPE_ZSET, REDISMODULE_KEYTYPE_HASH, REDISMODULE_KEYTYPE_ZSET,
                              REDISMODULE_KEYTYPE_ZSET, REDISMODULE_KEYTYPE_LIST, REDISMODULE_KEYTYPE_HASH};
  for (int i = 0; i < 6; ++i) {
    RedisModuleKey *key = emq_open_read(call->ctx, call->keys[at - 1 + i]);
    const int t = RedisModule_KeyType(key);
    RedisModule_CloseKey(key);
    if (t != kinds[i] && t != REDISMODULE_KEYTYPE_EMPTY) {
      RedisModule_ReplyWithError(call->ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
      return 0;
    }
  }
  return 1;
}

/* A pending grouped job goes to its group (the script's
 * enqueue_to_group), through the six KEYS at `at`; gwait is not among
 * them, and an enqueue never takes a group out of it. */
static void to_group(RedisModuleCtx *ctx, const EmqCall *call, int at, const EmqOptions *o, const char *queue,
                     size_t qlen, RedisModuleString *id) {
  EmqGroups g;
  memset(&g, 0, sizeof g);
  g.ctx = ctx;
  g.prefix = RedisModule_CreateString(ctx, queue, qlen);
  g.gq_root = emq_row_key(ctx, g.prefix, RedisModule_CreateString(ctx, "gq:", 3));
  g.grp_root = emq_row_key(ctx, g.prefix, RedisModule_CreateString(ctx, "grp:", 4));
  g.gact_root = emq_row_key(ctx, g.prefix, RedisModule_CreateString(ctx, "gact:", 5));
  g.idx_name = call->keys[at + 2];
  g.rot_name = call->keys[at + 3];
  g.groups_name = call->keys[at + 4];
  g.active_name = emq_row_key(ctx, g.prefix, RedisModule_CreateString(ctx, "active", 6));
  g.idx = emq_open_write(ctx, g.idx_name);
  g.rot = emq_open_write(ctx, g.rot_name);
  g.groups = emq_open_read(ctx, g.groups_name);
  emq_group_to(&g, o->group, id, o->has_lane ? o->lane : 0);
}

/* The KEYS the options need, by position as the script reads them: 1 when
 * they are, else the script's refusal has been replied. */
static int keys_as_options_need(const EmqCall *call, int numkeys, const EmqOptions *o, const char *queue, size_t qlen,
                                RedisModuleString **lock) {
  const int want = 2 + o->has_due + (o->unique != NULL) + (o->group != NULL ? 6 : 0) + (call->events.stream != NULL);
  int ok = numkeys == want;
  if (ok && o->has_due) {
    size_t len;
    const char *k = RedisModule_StringPtrLen(call->keys[2], &len);
    ok = len == qlen + 7 && memcmp(k, queue, qlen) == 0 && memcmp(k + qlen, "delayed", 7) == 0;
  }
  if (!ok) {
    emq_reply_error(call->ctx,
                    "EMQARG enqueue takes KEYS row, pending, then delayed with due_ms, the lock with unique, "
                    "the group's six with group, then the events stream");
    return 0;
  }
  *lock = NULL;
  if (o->unique == NULL) return o->group == NULL || group_keys(call, 3 + o->has_due, o, queue, qlen);
  const int at = o->has_due ? 4 : 3;
  size_t len, ulen;
  const char *k = RedisModule_StringPtrLen(call->keys[at - 1], &len);
  const char *u = RedisModule_StringPtrLen(o->unique, &ulen);
  if (len != qlen + 5 + ulen || memcmp(k, queue, qlen) != 0 || memcmp(k + qlen, "uniq:", 5) != 0 ||
      memcmp(k + qlen + 5, u, ulen) != 0) {
    char text[128];
    snprintf(text, sizeof text, "EMQARG KEYS[%d] must be emq:{q}:uniq:<unique>, the lock of the key given", at);
    emq_reply_error(call->ctx, text);
    return 0;
  }
  *lock = call->keys[at - 1];
  return o->group == NULL || group_keys(call, at + 1, o, queue, qlen);
}

/* The row's fields, as the script's one HSET writes them. */
static int row_fields(RedisModuleCtx *ctx, const EmqOptions *o, RedisModuleString *payload, RedisModuleString **pairs) {
  int n = 0;
  pairs[n++] = emq_word(EMQ_WORD_STATE);
  pairs[n++] = emq_word(o->has_due ? EMQ_WORD_DELAYED : EMQ_WORD_PENDING);
  pairs[n++] = emq_word(EMQ_WORD_ATTEMPTS);
  pairs[n++] = emq_word(EMQ_WORD_ZERO);
  pairs[n++] = emq_word(EMQ_WORD_PAYLOAD);
  pairs[n++] = payload;
  char buf[24];
  if (o->has_lane && o->lane != 0) {
    pairs[n++] = emq_word(EMQ_WORD_LANE);
    pairs[n++] = RedisModule_CreateString(ctx, buf, emq_format_ll(buf, (long long)o->lane));
  }
  if (o->unique != NULL) {
    pairs[n++] = emq_word(EMQ_WORD_UNIQUE);
    pairs[n++] = o->unique;
    pairs[n++] = emq_word(EMQ_WORD_UNIQUE_MODE);
    pairs[n++] = RedisModule_CreateString(ctx, o->unique_mode, strlen(o->unique_mode));
    if (o->unique_for_ms > 0) {
      pairs[n++] = emq_word(EMQ_WORD_UNIQUE_FOR_MS);
      pairs[n++] = RedisModule_CreateString(ctx, buf, emq_format_ll(buf, (long long)o->unique_for_ms));
    }
  }
  if (o->traceparent != NULL) {
    pairs[n++] = emq_word(EMQ_WORD_TRACEPARENT);
    pairs[n++] = o->traceparent;
  }
  if (o->tracestate != NULL) {
    pairs[n++] = emq_word(EMQ_WORD_TRACESTATE);
    pairs[n++] = o->tracestate;
  }
  if (o->group != NULL) {
    pairs[n++] = emq_word(EMQ_WORD_GROUP);
    pairs[n++] = o->group;
  }
  return n / 2;
}

/* The key is held (held_reply): a pending or delayed holder's payload (and
 * a delayed one's due time) replaced in replace mode, else a duplicate. */
static int held(RedisModuleCtx *ctx, const EmqCall *call, const EmqOptions *o, const char *queue, size_t qlen,
                RedisModuleString *holder, RedisModuleString *state) {
  /* A duplicate counts in the stats beside the row key: a key the server
   * does not check against the caller's ACL, so checked here, before any
   * write (and only where the count is made, as the script's HINCRBY). */
  if (!emq_may_touch_stats(ctx, kEnqueue.name, queue, qlen)) return REDISMODULE_OK;
  const int replaces = strcmp(o->unique_mode, "replace") == 0 &&
                       (emq_bytes_equal(state, "pending", 7) || emq_bytes_equal(state, "delayed", 7));
  if (!replaces) {
    emq_count_unique(ctx, queue, qlen, EMQ_WORD_DUPLICATES, "enqueue");
    return emq_reply_holder(ctx, 0, holder, state);
  }
  RedisModuleKey *delayed = NULL;
  if (o->has_due && emq_bytes_equal(state, "delayed", 7)) {
    delayed = emq_open_write(ctx, call->keys[2]);
    if (!emq_require_type(ctx, delayed, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  size_t hlen;
  const char *h = RedisModule_StringPtrLen(holder, &hlen);
  char *name = RedisModule_PoolAlloc(ctx, qlen + 4 + hlen);
  memcpy(name, queue, qlen);
  memcpy(name + qlen, "job:", 4);
  memcpy(name + qlen + 4, h, hlen);
  RedisModuleString *row_name = RedisModule_CreateString(ctx, name, qlen + 4 + hlen);
  RedisModuleKey *row = emq_open_write(ctx, row_name);
  const EmqWord field = EMQ_WORD_PAYLOAD;
  RedisModuleString *payload = call->args[1];
  emq_hset(ctx, row, row_name, 1, &field, &payload);
  RedisModule_CloseKey(row);
  if (delayed != NULL) emq_zadd(ctx, delayed, call->keys[2], o->due_ms, holder, 1);
  emq_count_unique(ctx, queue, qlen, EMQ_WORD_REPLACED, "enqueue");
  return emq_reply_holder(ctx, 2, holder, state);
}

int emq_enqueue(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kEnqueue, &call)) return REDISMODULE_OK;
  RedisModuleString *row_name = call.keys[0];
  RedisModuleString *id = call.args[0], *payload = call.args[1];
  if (!emq_job_id_arg(&call, 1)) return REDISMODULE_OK;
  EmqOptions o;
  if (!emq_options_read(&call, 3, call.num_args, EMQ_ENQUEUE_OPTIONS, "enqueue", &o)) return REDISMODULE_OK;
  /* emq:{q}: of the row's queue (the layout made the row emq:{q}:job:<id>). */
  size_t rlen, idlen;
  const char *queue = RedisModule_StringPtrLen(row_name, &rlen);
  RedisModule_StringPtrLen(id, &idlen);
  const size_t qlen = rlen - idlen - 4;
  RedisModuleString *lock;
  if (!keys_as_options_need(&call, (int)(call.args - call.keys), &o, queue, qlen, &lock)) return REDISMODULE_OK;

  RedisModuleKey *row = emq_open_write(ctx, row_name);
  if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_EMPTY) {
    if (lock == NULL) return RedisModule_ReplyWithLongLong(ctx, 0);
    if (!emq_may_touch_stats(ctx, kEnqueue.name, queue, qlen)) return REDISMODULE_OK;
    RedisModuleString *state = emq_hget(row, EMQ_WORD_STATE);
    emq_count_unique(ctx, queue, qlen, EMQ_WORD_DUPLICATES, "enqueue");
    return emq_reply_holder(ctx, 0, id, state != NULL ? state : emq_word(EMQ_WORD_EMPTY));
  }
  if (lock != NULL) {
    RedisModuleString *holder, *state;
    const int h = emq_holder_of(ctx, kEnqueue.name, lock, o.unique, queue, qlen, strcmp(o.unique_mode, "replace") == 0,
                                &holder, &state);
    if (h < 0) return REDISMODULE_OK;
    if (h > 0) return held(ctx, &call, &o, queue, qlen, holder, state);
  }
  RedisModuleString *set_name = o.has_due ? call.keys[2] : call.keys[1];
  /* A pending grouped job does not touch pending: its type is not its
   * business, as the script never reads it then. */
  const int grouped = o.group != NULL && !o.has_due;
  RedisModuleKey *set = grouped ? NULL : emq_open_write(ctx, set_name);
  if (!grouped && !emq_require_type(ctx, set, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;

  RedisModuleString *pairs[24];
  emq_hset_pairs(ctx, row, row_name, pairs, row_fields(ctx, &o, payload, pairs));
  if (grouped) {
    to_group(ctx, &call, 3 + o.has_due + (o.unique != NULL), &o, queue, qlen, id);
  } else {
    emq_zadd(ctx, set, set_name, o.has_due ? o.due_ms : (o.has_lane ? o.lane : 0), id, 0);
  }
  emq_take_lock(ctx, lock, id, &o);
  emq_emit(ctx, &call.events, o.has_due ? EMQ_WORD_DELAYED : EMQ_WORD_PENDING, id, NULL, NULL);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}
