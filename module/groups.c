/* The group steps every EMQ.* command shares: see groups.h. Each is the
 * scripts' function of the same name, command for command. */
#include "groups.h"

#include <stdio.h>
#include <string.h>

#include "lua_numbers.h"
#include "rows.h"
#include "words.h"
#include "writes.h"

/* The most counted ids one check looks at. */
#define EMQ_CHECK_IDS 10

typedef struct {
  const char *name;
  long long lo, hi;
  const char *range;
} PolicyField;

static const PolicyField kFields[] = {
    {"weight", 1, 1000, "1..1000"},
    {"max_active", 1, 1000000, "1..1000000"},
    {"rate_max", 1, 1000000, "1..1000000"},
    {"rate_window_ms", 1, 86400000, "1..86400000"},
};

int emq_is_group(const char *g, size_t len) {
  if (len < 1 || len > 128) return 0;
  for (size_t i = 0; i < len; ++i) {
    const char c = g[i];
    const int ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' ||
                   c == ':' || c == '-';
    if (!ok) return 0;
  }
  return 1;
}

/* One name=value field of a policy into p; seen marks the names given. */
static int policy_field(const char *f, size_t len, EmqPolicy *p, int seen[5], char problem[128]) {
  const char *eq = memchr(f, '=', len);
  if (eq == NULL || eq == f) {
    snprintf(problem, 128, "policy must be name=value fields separated by spaces");
    return 0;
  }
  const size_t nlen = (size_t)(eq - f), vlen = len - nlen - 1;
  const char *v = eq + 1;
  const int paused = nlen == 6 && memcmp(f, "paused", 6) == 0;
  int which = -1;
  for (int i = 0; i < 4; ++i) {
    if (strlen(kFields[i].name) == nlen && memcmp(kFields[i].name, f, nlen) == 0) which = i;
  }
  if (!paused && which < 0) {
    snprintf(problem, 128, "unknown policy field %.*s", (int)(nlen > 64 ? 64 : nlen), f);
    return 0;
  }
  const int slot = paused ? 4 : which;
  if (seen[slot]) {
    snprintf(problem, 128, "policy field %.*s is given twice", (int)nlen, f);
    return 0;
  }
  seen[slot] = 1;
  if (paused) {
    if (vlen != 1 || v[0] != '1') {
      snprintf(problem, 128, "paused must be 1");
      return 0;
    }
    p->paused = 1;
    return 1;
  }
  long long n;
  if (!emq_is_counter(v, vlen, &n) || n < kFields[which].lo || n > kFields[which].hi) {
    snprintf(problem, 128, "%s must be an integer in %s", kFields[which].name, kFields[which].range);
    return 0;
  }
  long long *out[] = {&p->weight, &p->max_active, &p->rate_max, &p->rate_window_ms};
  *out[which] = n;
  return 1;
}

int emq_parse_policy(const char *text, size_t len, EmqPolicy *p, char problem[128]) {
  memset(p, 0, sizeof *p);
  int seen[5] = {0};
  /* As the script splits text .. ' ' at each space: an empty field (two
   * spaces, or one at either end) is not name=value. */
  size_t start = 0;
  while (len > 0 && start <= len) {
    const char *sp = memchr(text + start, ' ', len - start);
    const size_t end = sp ? (size_t)(sp - text) : len;
    if (!policy_field(text + start, end - start, p, seen, problem)) return 0;
    start = end + 1;
    if (sp == NULL) break;
    if (start == len) {
      snprintf(problem, 128, "policy must be name=value fields separated by spaces");
      return 0;
    }
  }
  if (p->rate_max && !p->rate_window_ms) {
    snprintf(problem, 128, "rate_max must be set with rate_window_ms");
    return 0;
  }
  if (p->rate_window_ms && !p->rate_max) {
    snprintf(problem, 128, "rate_window_ms must be set with rate_max");
    return 0;
  }
  if (p->weight == 0) p->weight = 1;
  return 1;
}

static int type_or_empty(RedisModuleKey *key, int type) {
  const int t = RedisModule_KeyType(key);
  return t == type || t == REDISMODULE_KEYTYPE_EMPTY;
}

int emq_groups_begin(RedisModuleCtx *ctx, const EmqCall *call, const EmqTransition *t, EmqGroups *g,
                     RedisModuleKey *active) {
  memset(g, 0, sizeof *g);
  g->gq_root = emq_optional_key(call, t, EMQ_KEY_GQ_ROOT);
  if (g->gq_root == NULL) return 0;
  g->ctx = ctx;
  g->command = t->name;
  g->grp_root = emq_optional_key(call, t, EMQ_KEY_GRP_ROOT);
  g->gact_root = emq_optional_key(call, t, EMQ_KEY_GACT_ROOT);
  g->idx_name = emq_optional_key(call, t, EMQ_KEY_GIDX);
  g->rot_name = emq_optional_key(call, t, EMQ_KEY_ROT);
  g->groups_name = emq_optional_key(call, t, EMQ_KEY_GROUPS);
  g->wait_name = emq_optional_key(call, t, EMQ_KEY_GWAIT);
  /* Placed by their shapes, the seven may come in part: the block is all
   * of them or none, else no step could run. */
  RedisModuleString *block[] = {g->grp_root, g->gact_root, g->idx_name, g->rot_name, g->groups_name, g->wait_name};
  for (size_t i = 0; i < sizeof block / sizeof block[0]; ++i) {
    if (block[i] != NULL) continue;
    char text[160];
    snprintf(text, sizeof text,
             "EMQLAYOUT %s takes the group block whole: seven KEYS from emq:{q}:gq: to emq:{q}:gwait", t->name);
    RedisModule_ReplyWithError(ctx, text);
    return -1;
  }
  size_t len;
  const char *root = RedisModule_StringPtrLen(g->gq_root, &len);
  g->prefix = RedisModule_CreateString(ctx, root, len - 3); /* without "gq:" */
  g->active = active;
  g->active_name = emq_group_key(g, g->prefix, emq_word(EMQ_WORD_ACTIVE));
  g->rot = emq_open_write(ctx, g->rot_name);
  g->idx = emq_open_write(ctx, g->idx_name);
  g->wait = emq_open_write(ctx, g->wait_name);
  g->groups = emq_open_read(ctx, g->groups_name);
  if (!type_or_empty(g->rot, REDISMODULE_KEYTYPE_LIST) || !type_or_empty(g->idx, REDISMODULE_KEYTYPE_ZSET) ||
      !type_or_empty(g->wait, REDISMODULE_KEYTYPE_ZSET) || !type_or_empty(g->groups, REDISMODULE_KEYTYPE_HASH)) {
    RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
    return -1;
  }
  return 1;
}

mstime_t emq_groups_now(EmqGroups *g) {
  if (!g->have_now) emq_groups_set_now(g, emq_now_ms());
  return g->now;
}

void emq_groups_set_now(EmqGroups *g, mstime_t now) {
  g->now = now;
  g->have_now = 1;
}

RedisModuleString *emq_group_key(EmqGroups *g, RedisModuleString *root, RedisModuleString *name) {
  return emq_row_key(g->ctx, root, name);
}

static void log_group(EmqGroups *g, RedisModuleString *name, const char *text) {
  size_t nlen, plen;
  const char *n = RedisModule_StringPtrLen(name, &nlen), *p = RedisModule_StringPtrLen(g->prefix, &plen);
  RedisModule_Log(g->ctx, "warning", "emq: group %.*s of %.*s %s", (int)nlen, n, (int)plen, p, text);
}

int emq_group_may_touch(EmqGroups *g, RedisModuleString **keys, size_t n) {
  if (g->refused) return 0;
  if (emq_may_touch_rows(g->ctx, g->command, keys, n, EMQ_ROW_WRITE)) return 1;
  g->refused = 1;
  return 0;
}

static int holds(const EmqGroupKeys *k, RedisModuleString *name) {
  return k->name != NULL && emq_str_equal(k->name, name);
}

static void let_go(EmqGroupKeys *k) {
  if (k->name == NULL) return;
  RedisModule_CloseKey(k->gq);
  RedisModule_CloseKey(k->grp);
  RedisModule_CloseKey(k->gact);
  k->name = NULL;
}

static void name_keys(EmqGroups *g, RedisModuleString *name, RedisModuleString *names[3]) {
  names[0] = emq_group_key(g, g->gq_root, name);
  names[1] = emq_group_key(g, g->grp_root, name);
  names[2] = emq_group_key(g, g->gact_root, name);
}

static EmqGroupKeys *taken(EmqGroups *g, RedisModuleString *name) {
  return holds(&g->held, name) ? &g->held : holds(&g->spare, name) ? &g->spare : NULL;
}

/* name's keys opened in a slot: the held one, or while a turn has pinned
 * it, the spare (never the pinned group). */
static EmqGroupKeys *take(EmqGroups *g, RedisModuleString *name, RedisModuleString *const names[3]) {
  EmqGroupKeys *k = g->pinned ? &g->spare : &g->held;
  let_go(k);
  size_t len;
  const char *s = RedisModule_StringPtrLen(name, &len);
  k->name = RedisModule_CreateString(g->ctx, s, len); /* the caller's may be freed first */
  k->checked = 0;
  k->gq_name = names[0];
  k->grp_name = names[1];
  k->gact_name = names[2];
  k->gq = emq_open_write(g->ctx, k->gq_name);
  k->grp = emq_open_write(g->ctx, k->grp_name);
  k->gact = emq_open_write(g->ctx, k->gact_name);
  return k;
}

EmqGroupKeys *emq_group_keys(EmqGroups *g, RedisModuleString *name) {
  EmqGroupKeys *k = taken(g, name);
  if (k != NULL) return k;
  RedisModuleString *names[3];
  name_keys(g, name, names);
  return take(g, name, names);
}

void emq_group_pin(EmqGroups *g) { g->pinned = 1; }

void emq_group_unpin(EmqGroups *g) {
  /* The spare's group may be taken next as the held one: one handle per
   * key, so the spare's go first. */
  let_go(&g->spare);
  g->pinned = 0;
}

RedisModuleString *emq_group_of(EmqGroups *g, RedisModuleString *group) {
  if (g->gq_root == NULL || group == NULL || g->refused) return NULL;
  size_t len;
  const char *s = RedisModule_StringPtrLen(group, &len);
  if (!emq_is_group(s, len)) return NULL;
  EmqGroupKeys *k = taken(g, group);
  if (k != NULL && k->checked) return group;
  RedisModuleString *names[3];
  if (k != NULL) {
    names[0] = k->gq_name;
    names[1] = k->grp_name;
    names[2] = k->gact_name;
  } else {
    name_keys(g, group, names);
  }
  if (!emq_group_may_touch(g, names, 3)) return NULL;
  if (k == NULL) k = take(g, group, names);
  /* The steps write only these types, so the check holds while it is held. */
  k->checked = type_or_empty(k->gq, REDISMODULE_KEYTYPE_ZSET) && type_or_empty(k->grp, REDISMODULE_KEYTYPE_HASH) &&
               type_or_empty(k->gact, REDISMODULE_KEYTYPE_ZSET);
  if (k->checked) return group;
  log_group(g, group, "has a key of another type; its job moved as an ungrouped one, the keys left for an operator");
  return NULL;
}

int emq_policy_of(EmqGroups *g, RedisModuleString *name, EmqPolicy *p) {
  RedisModuleString *own = NULL, *fallback = NULL;
  if (RedisModule_KeyType(g->groups) == REDISMODULE_KEYTYPE_HASH) {
    RedisModule_HashGet(g->groups, REDISMODULE_HASH_NONE, name, &own, emq_word(EMQ_WORD_STAR), &fallback, NULL);
  }
  RedisModuleString *text = own != NULL ? own : fallback;
  size_t len = 0;
  const char *s = text != NULL ? RedisModule_StringPtrLen(text, &len) : "";
  char problem[128];
  return emq_parse_policy(s, len, p, problem);
}

/* The active set's handle for reading, and whether it was opened here. */
static RedisModuleKey *active_of(EmqGroups *g, int *opened) {
  *opened = g->active == NULL;
  return *opened ? emq_open_read(g->ctx, g->active_name) : g->active;
}

void emq_group_check_count(EmqGroups *g, RedisModuleString *name) {
  EmqGroupKeys *k = emq_group_keys(g, name);
  RedisModuleKey *gact = k->gact;
  RedisModuleString *ids[EMQ_CHECK_IDS];
  int n = 0;
  if (RedisModule_KeyType(gact) == REDISMODULE_KEYTYPE_ZSET &&
      RedisModule_ZsetFirstInScoreRange(gact, -1.0 / 0.0, (double)emq_groups_now(g), 0, 0) == REDISMODULE_OK) {
    while (n < EMQ_CHECK_IDS && !RedisModule_ZsetRangeEndReached(gact)) {
      double score;
      ids[n++] = RedisModule_ZsetRangeCurrentElement(gact, &score);
      RedisModule_ZsetRangeNext(gact);
    }
    RedisModule_ZsetRangeStop(gact);
  }
  int opened;
  RedisModuleKey *active = active_of(g, &opened);
  RedisModuleString *job_root = emq_group_key(g, g->prefix, RedisModule_CreateString(g->ctx, "job:", 4));
  for (int i = 0; i < n; ++i) {
    /* A row is built from the root, so the server never checks it: the
     * caller's ACL is checked here, where the script's TYPE would be
     * refused. The counts checked before stay checked, as the script's. */
    RedisModuleString *row_name = emq_row_key(g->ctx, job_root, ids[i]);
    if (!emq_may_touch_rows(g->ctx, g->command, &row_name, 1, REDISMODULE_CMD_KEY_ACCESS)) {
      g->refused = 1;
      break;
    }
    RedisModuleKey *row = emq_open_read(g->ctx, row_name);
    RedisModuleString *state = NULL, *group = NULL;
    if (RedisModule_KeyType(row) == REDISMODULE_KEYTYPE_HASH) {
      RedisModule_HashGet(row, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_STATE), &state, emq_word(EMQ_WORD_GROUP),
                          &group, NULL);
    }
    RedisModule_CloseKey(row);
    double deadline;
    const int running = emq_bytes_equal(state, "active", 6) && emq_str_equal(group, name) &&
                        RedisModule_KeyType(active) == REDISMODULE_KEYTYPE_ZSET &&
                        RedisModule_ZsetScore(active, ids[i], &deadline) == REDISMODULE_OK;
    if (running) {
      emq_zadd(g->ctx, gact, k->gact_name, deadline, ids[i], 0);
    } else {
      emq_zrem(g->ctx, gact, k->gact_name, ids[i]);
    }
  }
  if (opened) RedisModule_CloseKey(active);
}

void emq_rot_pop(EmqGroups *g) {
  if (!g->journal.on) {
    emq_lpop(g->ctx, g->rot, g->rot_name);
    return;
  }
  emq_lpop_unreplicated(g->ctx, g->rot, g->rot_name);
  ++g->journal.rot_pops;
}

void emq_rot_push(EmqGroups *g, RedisModuleString *name) {
  if (!g->journal.on) {
    emq_rpush(g->ctx, g->rot, g->rot_name, name);
    return;
  }
  emq_rpush_unreplicated(g->ctx, g->rot, g->rot_name, name);
  EmqJournal *j = &g->journal;
  emq_append(g->ctx, &j->rot_pushed, &j->n_pushed, &j->cap_pushed, name);
}

static void log_idx(EmqGroups *g, RedisModuleString *score, RedisModuleString *member) {
  EmqJournal *j = &g->journal;
  emq_append(g->ctx, &j->idx_log, &j->n_logged, &j->cap_logged, score);
  emq_append(g->ctx, &j->idx_log, &j->n_logged, &j->cap_logged, member);
}

static double idx_incr(EmqGroups *g, long long delta, RedisModuleString *member) {
  if (!g->journal.on) return emq_zincrby(g->ctx, g->idx, g->idx_name, delta, member);
  const double score = emq_zincrby_unreplicated(g->ctx, g->idx, g->idx_name, delta, member);
  char buf[40];
  log_idx(g, RedisModule_CreateString(g->ctx, buf, emq_format_score(buf, score)), member);
  return score;
}

static void idx_rem(EmqGroups *g, RedisModuleString *member) {
  if (!g->journal.on) {
    emq_zrem(g->ctx, g->idx, g->idx_name, member);
    return;
  }
  if (emq_zrem_unreplicated(g->ctx, g->idx, g->idx_name, member)) log_idx(g, NULL, member);
}

/* What grp's in holds: a word, or NULL. */
static RedisModuleString *where_of(RedisModuleKey *grp) { return emq_hget(grp, EMQ_WORD_IN); }

static int is_word(RedisModuleString *s, EmqWord w) { return s != NULL && emq_str_equal(s, emq_word(w)); }

static int exists(RedisModuleKey *key) { return RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY; }

int emq_group_wake(EmqGroups *g, RedisModuleString *name, int after_end) {
  EmqGroupKeys *k = emq_group_keys(g, name);
  RedisModuleKey *grp = k->grp;
  RedisModuleString *grp_name = k->grp_name;
  RedisModuleString *where = where_of(grp);
  EmqPolicy p;
  const int stays = is_word(where, EMQ_WORD_ROT) || is_word(where, EMQ_WORD_RATE) ||
                    (is_word(where, EMQ_WORD_CAP) && !after_end) || !exists(k->gq) || !emq_policy_of(g, name, &p) ||
                    p.paused;
  if (!stays) {
    if (is_word(where, EMQ_WORD_CAP)) emq_zrem(g->ctx, g->wait, g->wait_name, name);
    emq_rot_push(g, name);
    static const EmqWord field = EMQ_WORD_IN;
    RedisModuleString *value = emq_word(EMQ_WORD_ROT);
    emq_hset(g->ctx, grp, grp_name, 1, &field, &value);
    emq_persist(g->ctx, grp, grp_name);
  }
  return !stays;
}

void emq_group_tidy(EmqGroups *g, RedisModuleString *name) {
  EmqGroupKeys *k = emq_group_keys(g, name);
  RedisModuleKey *grp = k->grp;
  RedisModuleString *grp_name = k->grp_name;
  RedisModuleString *where = where_of(grp);
  int busy = is_word(where, EMQ_WORD_ROT) || exists(k->gq);
  if (!busy && exists(k->gact)) {
    emq_group_check_count(g, name);
    if (g->refused) return;
    busy = exists(k->gact);
  }
  if (!busy) {
    if (is_word(where, EMQ_WORD_CAP) || is_word(where, EMQ_WORD_RATE)) emq_zrem(g->ctx, g->wait, g->wait_name, name);
    idx_rem(g, name);
    EmqPolicy p;
    if (emq_policy_of(g, name, &p) && p.rate_max > 0 && emq_hget(grp, EMQ_WORD_RATE_AT) != NULL) {
      static const EmqWord fields[] = {EMQ_WORD_IN, EMQ_WORD_DEFICIT};
      emq_hdel(g->ctx, grp, grp_name, 2, fields);
      emq_pexpire(g->ctx, grp, grp_name, emq_groups_now(g) + (mstime_t)p.rate_window_ms);
    } else {
      emq_del(g->ctx, grp, grp_name);
    }
  }
}

/* ZREM gact:<name> id: whether it was counted. */
static int uncount_id(EmqGroups *g, RedisModuleString *name, RedisModuleString *id) {
  EmqGroupKeys *k = emq_group_keys(g, name);
  double score;
  const int counted = RedisModule_KeyType(k->gact) == REDISMODULE_KEYTYPE_ZSET &&
                      RedisModule_ZsetScore(k->gact, id, &score) == REDISMODULE_OK;
  if (counted) emq_zrem(g->ctx, k->gact, k->gact_name, id);
  return counted;
}

void emq_group_to(EmqGroups *g, RedisModuleString *name, RedisModuleString *id, double lane) {
  EmqGroupKeys *k = emq_group_keys(g, name);
  RedisModuleKey *gq = k->gq;
  RedisModuleString *gq_name = k->gq_name;
  int flags = 0;
  RedisModule_ZsetAdd(gq, lane, id, &flags);
  const int added = (flags & REDISMODULE_ZADD_ADDED) != 0;
  if (flags & (REDISMODULE_ZADD_ADDED | REDISMODULE_ZADD_UPDATED)) {
    emq_changed(g->ctx, REDISMODULE_NOTIFY_ZSET, "zadd", gq_name);
    char buf[40];
    RedisModule_Replicate(g->ctx, "ZADD", "sbs", gq_name, buf, emq_format_score(buf, lane), id);
  }
  const int left = uncount_id(g, name, id);
  if (added) {
    idx_incr(g, 1, name);
    idx_incr(g, 1, emq_word(EMQ_WORD_STAR));
  }
  /* Without gwait (an enqueue's six KEYS) no step may take a group out of
   * it: a group parked at its cap stays until its next look, as the
   * enqueue scripts' enqueue_to_group does. */
  emq_group_wake(g, name, left && g->wait_name != NULL);
}

void emq_group_out(EmqGroups *g, RedisModuleString *name, RedisModuleString *id) {
  if (uncount_id(g, name, id)) emq_group_wake(g, name, 1);
  emq_group_tidy(g, name);
}

static void uncount_star(EmqGroups *g, long long n) {
  if (idx_incr(g, -n, emq_word(EMQ_WORD_STAR)) <= 0) idx_rem(g, emq_word(EMQ_WORD_STAR));
}

void emq_group_uncount(EmqGroups *g, RedisModuleString *name, long long n) {
  idx_incr(g, -n, name);
  /* A walk's visits move * once, at its end, as the script's walk does:
   * in a small gidx (a listpack) each ZINCRBY walks every member. */
  if (g->journal.on) {
    g->journal.star_popped += n;
  } else {
    uncount_star(g, n);
  }
}

void emq_groups_journal(EmqGroups *g) {
  memset(&g->journal, 0, sizeof g->journal);
  g->journal.on = 1;
}

/* gidx's log as the replica takes it: each run of scores one ZADD, each
 * run of removals one ZREM, in the order they were made. */
static void replicate_idx(EmqGroups *g) {
  EmqJournal *j = &g->journal;
  RedisModuleString **argv = RedisModule_PoolAlloc(g->ctx, sizeof *argv * (1 + j->n_logged));
  size_t i = 0;
  while (i < j->n_logged) {
    const int removed = j->idx_log[i] == NULL;
    size_t argc = 1;
    argv[0] = g->idx_name;
    for (; i < j->n_logged && (j->idx_log[i] == NULL) == removed; i += 2) {
      if (!removed) argv[argc++] = j->idx_log[i];
      argv[argc++] = j->idx_log[i + 1];
    }
    RedisModule_Replicate(g->ctx, removed ? "ZREM" : "ZADD", "v", argv, argc);
  }
}

void emq_groups_flush(EmqGroups *g) {
  EmqJournal *j = &g->journal;
  if (!j->on) return;
  if (j->star_popped > 0) uncount_star(g, j->star_popped);
  j->on = 0;
  /* Pops from the head and pushes to the tail, in any interleaving, leave
   * (list ++ pushed) without its first rot_pops: so do these two. */
  if (j->n_pushed > 0) {
    RedisModuleString **argv = RedisModule_PoolAlloc(g->ctx, sizeof *argv * (1 + j->n_pushed));
    argv[0] = g->rot_name;
    memcpy(argv + 1, j->rot_pushed, sizeof *argv * j->n_pushed);
    RedisModule_Replicate(g->ctx, "RPUSH", "v", argv, 1 + j->n_pushed);
  }
  if (j->rot_pops > 0) RedisModule_Replicate(g->ctx, "LPOP", "sl", g->rot_name, j->rot_pops);
  replicate_idx(g);
}
