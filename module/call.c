/* One EMQ.* call before it writes: see call.h. */
#include "call.h"

#include <stdio.h>
#include <string.h>

#include "lua_numbers.h"

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
    case EMQ_KEY_OUTBOX: return "outbox";
    case EMQ_KEY_DEPS_ROOT: return "deps:";
    case EMQ_KEY_RESULTS_ROOT: return "results:";
    case EMQ_KEY_EVENTS: return "events";
    case EMQ_KEY_UNIQ_ROOT:
    case EMQ_KEY_LOCK: return "uniq:";
    case EMQ_KEY_GQ_ROOT:
    case EMQ_KEY_GQ: return "gq:";
    case EMQ_KEY_GRP_ROOT:
    case EMQ_KEY_GRP: return "grp:";
    case EMQ_KEY_GACT_ROOT:
    case EMQ_KEY_GACT: return "gact:";
    case EMQ_KEY_GIDX: return "gidx";
    case EMQ_KEY_ROT: return "rot";
    case EMQ_KEY_GROUPS: return "groups";
    case EMQ_KEY_GWAIT: return "gwait";
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

/* Whether key has role's shape, emq:{q}:<type> (a lock: emq:{q}:uniq:<k>
 * with k not empty; a row: emq:{q}:job:<anything>). */
static int names_one(EmqKeyRole role) {
  return role == EMQ_KEY_LOCK || role == EMQ_KEY_GQ || role == EMQ_KEY_GRP || role == EMQ_KEY_GACT;
}

static int has_shape(RedisModuleString *key, EmqKeyRole role) {
  size_t len, qlen, restlen;
  const char *k = RedisModule_StringPtrLen(key, &len), *q, *rest;
  const char *suffix = role_suffix(role);
  const size_t slen = strlen(suffix);
  if (!split_key(k, len, &q, &qlen, &rest, &restlen) || restlen < slen || memcmp(rest, suffix, slen) != 0) return 0;
  if (names_one(role)) return restlen > slen;
  return role == EMQ_KEY_ROW || restlen == slen;
}

RedisModuleString *emq_optional_key(const EmqCall *call, const EmqTransition *t, EmqKeyRole role) {
  for (int i = 0; i < t->num_optional; ++i) {
    if (t->optional[i] == role) return call->optional[i];
  }
  return NULL;
}

/* Gives each KEY after the transition's own (and before the stream) the
 * first optional role left whose shape it has, in order; roles holds
 * every KEY's role. 0 once it has replied EMQLAYOUT for a KEY that is
 * none of them. */
static int place_optional(RedisModuleCtx *ctx, const EmqTransition *t, EmqCall *call, int given, EmqKeyRole *roles) {
  int next = 0;
  for (int i = t->num_keys; i < given; ++i) {
    while (next < t->num_optional && !has_shape(call->keys[i], t->optional[next])) ++next;
    if (next == t->num_optional) {
      reply_layout(
          ctx, "EMQLAYOUT KEYS[%d] of %s must be %s", t->name, i + 1,
          t->num_optional == 0 ? "emq:{q}:events" : "one of its optional KEYS in their order, or emq:{q}:events last");
      return 0;
    }
    roles[i] = t->optional[next];
    call->optional[next++] = call->keys[i];
  }
  return 1;
}

static int check_layout(RedisModuleCtx *ctx, const EmqTransition *t, const EmqCall *call, int num_keys,
                        const EmqKeyRole *roles) {
  const char *q0 = NULL;
  size_t q0len = 0;
  for (int i = 0; i < num_keys; ++i) {
    size_t len, qlen, restlen;
    const char *k = RedisModule_StringPtrLen(call->keys[i], &len);
    const char *q, *rest;
    const EmqKeyRole role = roles[i];
    const char *suffix = role_suffix(role);
    size_t slen = strlen(suffix);
    int ok = split_key(k, len, &q, &qlen, &rest, &restlen) && restlen >= slen && memcmp(rest, suffix, slen) == 0;
    if (ok && names_one(role)) {
      ok = restlen > slen;
    } else if (ok && role == EMQ_KEY_ROW) {
      size_t idlen;
      const char *id = RedisModule_StringPtrLen(call->args[0], &idlen);
      ok = restlen == slen + idlen && memcmp(rest + slen, id, idlen) == 0;
      if (!ok)
        return reply_layout(ctx, "EMQLAYOUT KEYS[%d] of %s must be emq:{q}:%s<id>, the row of ARGV[1]", t->name, i + 1,
                            suffix);
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
    return RedisModule_ReplyWithError(ctx, "EMQWIRE " EMQ_WIRE_KEY
                                           " is not set: connect with an emq/1 executor, "
                                           "which sets it, before the first transition");
  }
  size_t len = 0;
  const char *held = type == REDISMODULE_KEYTYPE_STRING ? RedisModule_StringDMA(k, &len, REDISMODULE_READ) : "";
  if (type == REDISMODULE_KEYTYPE_STRING && len == strlen(EMQ_WIRE) && memcmp(held, EMQ_WIRE, len) == 0) {
    RedisModule_CloseKey(k);
    return -1;
  }
  char text[160];
  snprintf(text, sizeof text,
           "EMQWIRE " EMQ_WIRE_KEY " holds '%.*s', not '" EMQ_WIRE
           "': this server speaks another EchoMQ wire; use a separate database",
           (int)(len > 64 ? 64 : len), held);
  RedisModule_CloseKey(k);
  return RedisModule_ReplyWithError(ctx, text);
}

/* The scripts' first check, given the stream: its length (the last ARGV,
 * which num_args leaves out), then the stream's type. The key stays open
 * for the call's entries (AutoMemory closes it). */
static int check_stream(RedisModuleCtx *ctx, EmqCall *call) {
  size_t len;
  const char *s = RedisModule_StringPtrLen(call->args[call->num_args], &len);
  double n;
  if (!emq_matches_int(s, len, 0) || !emq_lua_tonumber(s, len, &n) || n < 1 || n > EMQ_MAX_EVENTS) {
    RedisModule_ReplyWithError(ctx, "EMQARG events must be an integer in 1..10000000");
    return 0;
  }
  call->events.len = (long long)n;
  call->events.key = RedisModule_OpenKey(ctx, call->events.stream, REDISMODULE_READ | REDISMODULE_WRITE);
  const int type = RedisModule_KeyType(call->events.key);
  if (type == REDISMODULE_KEYTYPE_EMPTY || type == REDISMODULE_KEYTYPE_STREAM) return 1;
  RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
  return 0;
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
  const int parsed = emq_strict_ll(n, nlen, &numkeys);
  const long long most = t->num_keys + t->num_optional + (t->events ? 1 : 0);
  if (!parsed || numkeys < t->num_keys || numkeys > most || numkeys > argc - 2) {
    const char *more = t->num_optional > 0 ? " (more: its optional KEYS, then the events stream, last)"
                       : t->events         ? " (one more: the events stream, last)"
                                           : "";
    char text[200];
    snprintf(text, sizeof text, "EMQLAYOUT %s takes numkeys %d and %d keys%s", t->name, t->num_keys, t->num_keys, more);
    RedisModule_ReplyWithError(ctx, text);
    return 0;
  }
  call->ctx = ctx;
  call->keys = argv + 2;
  call->args = argv + 2 + numkeys;
  for (int i = 0; i < EMQ_MAX_OPTIONAL; ++i) call->optional[i] = NULL;
  /* A key past the transition's own is the stream (last), an optional KEY
   * or a mistake: said as a layout error, before the arguments that
   * mistake shifted are counted. */
  const int with_stream = numkeys > t->num_keys && t->events && has_shape(call->keys[numkeys - 1], EMQ_KEY_EVENTS);
  call->num_args = argc - 2 - (int)numkeys - with_stream;
  call->events.stream = with_stream ? call->keys[numkeys - 1] : NULL;
  call->events.key = NULL;
  call->events.len = 0;
  /* numkeys is at most num_keys + EMQ_MAX_OPTIONAL + 1 here. */
  EmqKeyRole roles[32];
  for (int i = 0; i < t->num_keys; ++i) roles[i] = t->roles[i];
  if (with_stream) roles[numkeys - 1] = EMQ_KEY_EVENTS;
  if (!place_optional(ctx, t, call, (int)numkeys - with_stream, roles)) return 0;
  if (call->num_args < t->min_args) {
    RedisModule_WrongArity(ctx);
    return 0;
  }
  if (check_layout(ctx, t, call, (int)numkeys, roles) != -1) return 0;
  if (check_wire(ctx) != -1) return 0;
  return call->events.stream == NULL || check_stream(ctx, call);
}

const char *emq_arg(const EmqCall *call, int i, size_t *len) {
  if (i < 1 || i > call->num_args) {
    *len = 0;
    return NULL;
  }
  return RedisModule_StringPtrLen(call->args[i - 1], len);
}

int emq_int_arg(const EmqCall *call, int i, int allow_minus, double min, double max, const char *error, double *out) {
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

int emq_reply_error(RedisModuleCtx *ctx, const char *text) { return RedisModule_ReplyWithError(ctx, text); }

/* The index of the first of keys the caller's ACL refuses, written to ACL
 * LOG as the server logs a script's; n when it refuses none. */
static size_t first_refused(RedisModuleCtx *ctx, RedisModuleString **keys, size_t n, uint64_t flags) {
  RedisModuleString *name = RedisModule_GetCurrentUserName(ctx);
  /* No user: the server's own client, which may touch every key. */
  RedisModuleUser *user = name != NULL ? RedisModule_GetModuleUserFromUserName(name) : NULL;
  if (user == NULL) return n;
  size_t i = 0;
  while (i < n && RedisModule_ACLCheckKeyPermissions(user, keys[i], (int)flags) == REDISMODULE_OK) ++i;
  if (i < n) RedisModule_ACLAddLogEntry(ctx, user, keys[i], REDISMODULE_ACL_LOG_KEY);
  RedisModule_FreeModuleUser(user);
  return i;
}

int emq_acl_allows(RedisModuleCtx *ctx, RedisModuleString *key, uint64_t flags) {
  return first_refused(ctx, &key, 1, flags) == 1;
}

int emq_may_touch_rows(RedisModuleCtx *ctx, const char *command, RedisModuleString **rows, size_t n, uint64_t flags) {
  if (n == 0 || first_refused(ctx, rows, n, flags) == n) return 1;
  char text[128];
  snprintf(text, sizeof text, "ERR ACL failure in %s: No permissions to access a key", command);
  RedisModule_ReplyWithError(ctx, text);
  return 0;
}

mstime_t emq_now_ms(void) { return RedisModule_Milliseconds(); }
