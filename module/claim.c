/* EMQ.CLAIM: the native twin of lua/claim.lua. That script's header is the
 * contract (KEYS, ARGV, replies, errors); this file follows it byte for
 * byte, on the server's keys, without Lua.
 * Where the C differs in how, not what: every row the first round can
 * touch is checked against the caller's ACL before anything is written
 * (call.h), or, given the group block, every round's rows before its pop;
 * and the leases are replicated as one ZADD. The rotation's turns are in
 * rotation.c. */
#include <stdio.h>
#include <string.h>

#include "claiming.h"
#include "limits.h"
#include "pause.h"
#include "transitions.h"
#include "unique.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_PENDING, EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,
                                    EMQ_KEY_META,    EMQ_KEY_STATS,  EMQ_KEY_ROW_ROOT};
static const EmqTransition kClaim = {"EMQ.CLAIM",
                                     kRoles,
                                     6,
                                     0,
                                     1,
                                     {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX, EMQ_KEY_ROT,
                                      EMQ_KEY_GROUPS, EMQ_KEY_GWAIT, EMQ_KEY_UNIQ_ROOT},
                                     8};

static void skip_malformed(RedisModuleCtx *ctx, RedisModuleString *row, RedisModuleString *set) {
  size_t rlen, slen;
  const char *r = RedisModule_StringPtrLen(row, &rlen);
  const char *s = RedisModule_StringPtrLen(set, &slen);
  RedisModule_Log(ctx, "warning",
                  "emq claim: %.*s is not a hash, so not an emq/1 row; dropped from %.*s, left in place for an "
                  "operator",
                  (int)rlen, r, (int)slen, s);
}

static void skip_lane(RedisModuleCtx *ctx, RedisModuleString *row, RedisModuleString *set) {
  size_t rlen, slen;
  const char *r = RedisModule_StringPtrLen(row, &rlen);
  const char *s = RedisModule_StringPtrLen(set, &slen);
  RedisModule_Log(ctx, "warning", "emq claim: %.*s lane is not an integer in -1000..1000; left in %.*s for an operator",
                  (int)rlen, r, (int)slen, s);
}

/* emq:{q}:dead from the row root emq:{q}:job: (its layout checked). */
static RedisModuleString *dead_beside(RedisModuleCtx *ctx, RedisModuleString *root) {
  size_t len;
  const char *r = RedisModule_StringPtrLen(root, &len);
  char *name = RedisModule_PoolAlloc(ctx, len);
  memcpy(name, r, len - 4);
  memcpy(name + len - 4, "dead", 4);
  return RedisModule_CreateString(ctx, name, len);
}

/* The script's HSET row state dead error "row field <field> is not an
 * integer", then ZADD dead now id, and its dead entry (attempt: the row's
 * attempts, NULL when that is the field at fault). */
static void send_to_dead(RedisModuleCtx *ctx, const Claiming *sets, RedisModuleKey *row, RedisModuleString *row_name,
                         RedisModuleString *id, EmqWord field, RedisModuleString *attempts) {
  size_t flen, rlen;
  const char *f = RedisModule_StringPtrLen(emq_word(field), &flen);
  char error[64];
  const int elen = snprintf(error, sizeof error, "row field %.*s is not an integer", (int)flen, f);
  static const EmqWord fields[] = {EMQ_WORD_STATE, EMQ_WORD_ERROR};
  RedisModuleString *values[] = {emq_word(EMQ_WORD_DEAD), RedisModule_CreateString(ctx, error, (size_t)elen)};
  emq_hset(ctx, row, row_name, 2, fields, values);
  emq_zadd(ctx, sets->dead, sets->dead_name, (double)sets->now, id, 0);
  emq_emit(ctx, &sets->call->events, EMQ_WORD_DEAD, id, attempts, values[1]);
  const char *r = RedisModule_StringPtrLen(row_name, &rlen);
  size_t dlen;
  const char *d = RedisModule_StringPtrLen(sets->dead_name, &dlen);
  RedisModule_Log(ctx, "warning", "emq claim: %.*s field %.*s is not an integer; sent to %.*s for an operator",
                  (int)rlen, r, (int)flen, f, (int)dlen, d);
}

/* ZRANGEBYSCORE key -inf max LIMIT 0 limit, without writing: *n ids. */
static RedisModuleString **first_ids(RedisModuleCtx *ctx, RedisModuleKey *key, double max, size_t limit, size_t *n) {
  *n = 0;
  size_t cap = RedisModule_ValueLength(key);
  if (cap > limit) cap = limit;
  if (cap == 0) return NULL;
  RedisModuleString **ids = RedisModule_PoolAlloc(ctx, sizeof *ids * cap);
  if (RedisModule_ZsetFirstInScoreRange(key, -1.0 / 0.0, max, 0, 0) == REDISMODULE_OK) {
    while (*n < cap && !RedisModule_ZsetRangeEndReached(key)) {
      double score;
      ids[(*n)++] = RedisModule_ZsetRangeCurrentElement(key, &score);
      RedisModule_ZsetRangeNext(key);
    }
    RedisModule_ZsetRangeStop(key);
  }
  return ids;
}

/* The caller's ACL on the rows of ids, each of which claim reads and may
 * write; 0 once it has replied the refusal. */
static int may_touch(RedisModuleCtx *ctx, RedisModuleString *root, RedisModuleString **ids, size_t n) {
  if (n == 0) return 1;
  RedisModuleString **rows = RedisModule_PoolAlloc(ctx, sizeof *rows * n);
  for (size_t i = 0; i < n; ++i) rows[i] = emq_row_key(ctx, root, ids[i]);
  return emq_may_touch_rows(ctx, "EMQ.CLAIM", rows, n, EMQ_ROW_WRITE);
}

/* Per due id: ZREM, and back to pending at its lane when its row is a
 * hash whose lane is in range (its counters are claim's to judge). */
static void promote(RedisModuleCtx *ctx, const EmqCall *call, Claiming *sets, RedisModuleString **due, size_t n) {
  RedisModuleString *delayed_name = call->keys[2], *pending_name = call->keys[0], *root = call->keys[5];
  for (size_t i = 0; i < n; ++i) {
    RedisModuleString *row_name = emq_row_key(ctx, root, due[i]);
    RedisModuleKey *row = emq_open_write(ctx, row_name);
    double lane;
    if (RedisModule_KeyType(row) == REDISMODULE_KEYTYPE_EMPTY) {
      emq_zrem(ctx, sets->delayed, delayed_name, due[i]);
    } else if (RedisModule_KeyType(row) != REDISMODULE_KEYTYPE_HASH) {
      emq_zrem(ctx, sets->delayed, delayed_name, due[i]);
      skip_malformed(ctx, row_name, delayed_name);
    } else if (!emq_row_lane(row, &lane)) {
      skip_lane(ctx, row_name, delayed_name);
    } else {
      RedisModuleString *group = emq_group_of(&sets->groups, emq_hget(row, EMQ_WORD_GROUP));
      if (sets->groups.refused) {
        RedisModule_CloseKey(row);
        return;
      }
      emq_zrem(ctx, sets->delayed, delayed_name, due[i]);
      emq_set_state(ctx, row, row_name, EMQ_WORD_PENDING);
      if (group != NULL) {
        emq_group_to(&sets->groups, group, due[i], lane);
      } else {
        emq_zadd(ctx, sets->pending, pending_name, lane, due[i], 0);
      }
      emq_emit(ctx, &call->events, EMQ_WORD_PENDING, due[i], emq_hget(row, EMQ_WORD_ATTEMPTS), NULL);
    }
    RedisModule_CloseKey(row);
  }
}

/* One job's lease: attempts, lease_epoch and state written, replicated
 * and announced as one HSET, as the script writes them. 0 when the row is
 * gone, is not a hash (skipped and logged) or has a counter that is not an
 * integer (sent to dead). */
static int lease_job(RedisModuleCtx *ctx, const Claiming *sets, RedisModuleString *row_name,
                     RedisModuleString *set_name, Claimed *job, RedisModuleString **group) {
  RedisModuleKey *row = emq_open_write(ctx, row_name);
  const int type = RedisModule_KeyType(row);
  if (type == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_CloseKey(row);
    return 0;
  }
  RedisModuleString *attempts = NULL, *epoch = NULL;
  job->payload = job->unique = job->unique_mode = NULL;
  *group = NULL;
  if (type == REDISMODULE_KEYTYPE_HASH) {
    RedisModule_HashGet(row, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_ATTEMPTS), &attempts,
                        emq_word(EMQ_WORD_LEASE_EPOCH), &epoch, emq_word(EMQ_WORD_PAYLOAD), &job->payload,
                        emq_word(EMQ_WORD_UNIQUE), &job->unique, emq_word(EMQ_WORD_UNIQUE_MODE), &job->unique_mode,
                        emq_word(EMQ_WORD_GROUP), group, NULL);
  }
  if (type != REDISMODULE_KEYTYPE_HASH) {
    skip_malformed(ctx, row_name, set_name);
    RedisModule_CloseKey(row);
    return 0;
  }
  const int attempts_ok = emq_row_counter(attempts, &job->attempts);
  if (!attempts_ok || !emq_row_counter(epoch, &job->epoch)) {
    send_to_dead(ctx, sets, row, row_name, job->id, attempts_ok ? EMQ_WORD_LEASE_EPOCH : EMQ_WORD_ATTEMPTS,
                 attempts_ok ? attempts : NULL);
    RedisModule_CloseKey(row);
    return 0;
  }
  char a[24], e[24];
  const size_t alen = emq_format_ll(a, ++job->attempts);
  const size_t elen = emq_format_ll(e, ++job->epoch);
  static const EmqWord fields[] = {EMQ_WORD_ATTEMPTS, EMQ_WORD_LEASE_EPOCH, EMQ_WORD_STATE};
  job->attempts_text = RedisModule_CreateString(ctx, a, alen);
  RedisModuleString *values[] = {job->attempts_text, RedisModule_CreateString(ctx, e, elen), emq_word(EMQ_WORD_ACTIVE)};
  emq_hset(ctx, row, row_name, 3, fields, values);
  RedisModule_CloseKey(row);
  return 1;
}

/* A leased job of a group is counted in it: ZADD gact:<g> deadline id. */
static void count_in_group(Claiming *c, RedisModuleString *group, RedisModuleString *id) {
  /* Refused: leased all the same (a lease the reaper finds), no more. */
  RedisModuleString *g = emq_group_of(&c->groups, group);
  if (g == NULL) return;
  EmqGroupKeys *k = emq_group_keys(&c->groups, g);
  emq_zadd(c->groups.ctx, k->gact, k->gact_name, c->deadline, id, 0);
}

static Claimed *next_slot(Claiming *c) {
  if (c->claimed == c->jobs_cap) {
    const size_t cap = c->jobs_cap == 0 ? 16 : 2 * c->jobs_cap;
    Claimed *more = RedisModule_PoolAlloc(c->groups.ctx != NULL ? c->groups.ctx : c->call->ctx, sizeof *more * cap);
    if (c->claimed > 0) memcpy(more, c->jobs, sizeof *more * c->claimed);
    c->jobs = more;
    c->jobs_cap = cap;
  }
  return &c->jobs[c->claimed];
}

long long emq_lease_from(Claiming *c, RedisModuleKey *set, RedisModuleString *set_name, long long k,
                         long long *popped) {
  RedisModuleCtx *ctx = c->call->ctx;
  RedisModuleString *root = c->call->keys[5];
  long long leased = 0;
  *popped = 0;
  if (k <= 0) return 0;
  RedisModuleString **ids = RedisModule_PoolAlloc(ctx, sizeof *ids * (size_t)k);
  for (int round = 0; leased < k && !emq_claim_refused(c); ++round) {
    /* A round's rows are checked before its pop, as the script meets
     * them; without the block the first round's were checked before
     * anything was written. */
    if (round > 0 || c->check_first_round) {
      size_t next;
      RedisModuleString **head = first_ids(ctx, set, 1.0 / 0.0, (size_t)(k - leased), &next);
      if (!may_touch(ctx, root, head, next)) {
        c->refused = 1;
        break;
      }
    }
    const int n = emq_zpopmin(ctx, set, set_name, (int)(k - leased), ids);
    if (n == 0) break;
    *popped += n;
    for (int i = 0; i < n; ++i) {
      Claimed *job = next_slot(c);
      job->id = ids[i];
      RedisModuleString *group = NULL;
      if (!lease_job(ctx, c, emq_row_key(ctx, root, ids[i]), set_name, job, &group)) continue;
      ++c->claimed;
      ++leased;
      emq_zadd_batched(ctx, &c->leases, ids[i]);
      if (emq_bytes_equal(job->unique_mode, "started", 7)) {
        emq_release_key(ctx, c->uniq_root, ids[i], job->unique, job->unique_mode);
      }
      if (group != NULL) count_in_group(c, group, ids[i]);
      /* Its group's key refused: the script stops here, before the entry,
       * and leases none of the ids popped with it. */
      if (emq_claim_refused(c)) break;
      emq_emit(ctx, &c->call->events, EMQ_WORD_ACTIVE, ids[i], job->attempts_text, NULL);
    }
  }
  return leased;
}

/* HSET meta rate_credit <credit left> rate_at <now>: every claim of a
 * queue with a rate that is not paused, even one that claimed nothing. */
static void spend(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name, long long credit,
                  mstime_t now) {
  char c[24], a[24];
  const size_t clen = emq_format_ll(c, credit), alen = emq_format_ll(a, (long long)now);
  static const EmqWord fields[] = {EMQ_WORD_RATE_CREDIT, EMQ_WORD_RATE_AT};
  RedisModuleString *values[] = {RedisModule_CreateString(ctx, c, clen), RedisModule_CreateString(ctx, a, alen)};
  emq_hset(ctx, meta, meta_name, 2, fields, values);
}

static int reply_jobs(RedisModuleCtx *ctx, const Claimed *jobs, size_t claimed) {
  RedisModule_ReplyWithArray(ctx, (long)(4 * claimed));
  for (size_t i = 0; i < claimed; ++i) {
    RedisModule_ReplyWithString(ctx, jobs[i].id);
    RedisModule_ReplyWithString(ctx, jobs[i].payload != NULL ? jobs[i].payload : emq_word(EMQ_WORD_EMPTY));
    RedisModule_ReplyWithLongLong(ctx, jobs[i].attempts);
    RedisModule_ReplyWithLongLong(ctx, jobs[i].epoch);
  }
  return REDISMODULE_OK;
}

/* The queue's default policy (groups field *), read before anything is
 * written: a broken one refuses the claim, naming it, as a broken limit. */
static int read_default_policy(RedisModuleCtx *ctx, EmqGroups *g, EmqPolicy *p) {
  RedisModuleString *text = NULL;
  if (RedisModule_KeyType(g->groups) == REDISMODULE_KEYTYPE_HASH) {
    RedisModule_HashGet(g->groups, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_STAR), &text, NULL);
  }
  size_t len = 0, nlen;
  const char *t = text != NULL ? RedisModule_StringPtrLen(text, &len) : "";
  char problem[128];
  const int ok = emq_parse_policy(t, len, p, problem);
  if (ok && !p->paused) return 1;
  const char *name = RedisModule_StringPtrLen(g->groups_name, &nlen);
  char reply[256];
  snprintf(reply, sizeof reply, "EMQARG %.*s * %s", (int)nlen, name, ok ? "cannot be paused" : problem);
  RedisModule_ReplyWithError(ctx, reply);
  return 0;
}

/* Due groups of gwait back to the rotation's tail (the script's loop
 * after the promotion of due delayed jobs). */
static void promote_groups(Claiming *c, size_t limit) {
  EmqGroups *g = &c->groups;
  size_t n;
  RedisModuleString **due = first_ids(g->ctx, g->wait, (double)c->now, limit, &n);
  for (size_t i = 0; i < n; ++i) {
    emq_zrem(g->ctx, g->wait, g->wait_name, due[i]);
    if (emq_group_of(g, due[i]) == NULL) {
      if (g->refused) return;
      continue;
    }
    EmqGroupKeys *k = emq_group_keys(g, due[i]);
    static const EmqWord field = EMQ_WORD_IN;
    emq_hdel(g->ctx, k->grp, k->grp_name, 1, &field);
    if (!emq_group_wake(g, due[i], 1)) emq_group_tidy(g, due[i]);
    if (g->refused) return;
  }
}

/* The ungrouped jobs join a rotation that is not empty, as *. */
static void join_star(Claiming *c) {
  EmqGroups *g = &c->groups;
  if (RedisModule_ValueLength(g->rot) == 0 || RedisModule_KeyType(c->pending) == REDISMODULE_KEYTYPE_EMPTY) return;
  RedisModuleString *grp_name = emq_group_key(g, g->grp_root, emq_word(EMQ_WORD_STAR));
  if (!emq_group_may_touch(g, &grp_name, 1)) return;
  RedisModuleKey *grp = emq_open_write(g->ctx, grp_name);
  const int t = RedisModule_KeyType(grp);
  if ((t == REDISMODULE_KEYTYPE_HASH || t == REDISMODULE_KEYTYPE_EMPTY) &&
      !emq_str_equal(emq_word(EMQ_WORD_ROT), emq_hget(grp, EMQ_WORD_IN))) {
    emq_rot_push(g, emq_word(EMQ_WORD_STAR));
    static const EmqWord field = EMQ_WORD_IN;
    RedisModuleString *value = emq_word(EMQ_WORD_ROT);
    emq_hset(g->ctx, grp, grp_name, 1, &field, &value);
  }
  RedisModule_CloseKey(grp);
}

int emq_claim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kClaim, &call)) return REDISMODULE_OK;
  Claiming c;
  memset(&c, 0, sizeof c);
  c.call = &call;
  c.uniq_root = emq_optional_key(&call, &kClaim, EMQ_KEY_UNIQ_ROOT);
  /* The block's own types are checked first, as the script checks them. */
  RedisModuleKey *active = emq_open_write(ctx, call.keys[1]);
  const int grouped = emq_groups_begin(ctx, &call, &kClaim, &c.groups, active);
  if (grouped < 0) return REDISMODULE_OK;
  double lease_ms, max_count, promote_limit;
  if (!emq_int_arg(&call, 1, 1, 1, EMQ_MAX_MS, "EMQARG lease_ms must be an integer in 1..1000000000000", &lease_ms) ||
      !emq_int_arg(&call, 2, 1, 1, EMQ_MAX_BATCH, "EMQARG max_count must be an integer in 1..1000000", &max_count) ||
      !emq_int_arg(&call, 3, 1, 0, EMQ_MAX_BATCH, "EMQARG promote_limit must be an integer in 0..1000000",
                   &promote_limit)) {
    return REDISMODULE_OK;
  }

  /* Opened for writing: claim brings the rate's bucket up to date. */
  RedisModuleKey *meta = emq_open_write(ctx, call.keys[3]);
  if (!emq_require_type(ctx, meta, REDISMODULE_KEYTYPE_HASH)) return REDISMODULE_OK;
  /* One clock for the whole call, as the script reads TIME once. */
  const mstime_t now = emq_now_ms();
  emq_groups_set_now(&c.groups, now);
  const EmqPause pause = emq_read_pause(ctx, meta, call.keys[3], now);
  if (pause == EMQ_PAUSE_REFUSED) return REDISMODULE_OK;
  if (pause == EMQ_PAUSE_HOLDS) return RedisModule_ReplyWithArray(ctx, 0);
  RedisModuleKey *stats = emq_open_write(ctx, call.keys[4]);
  c.active = active;
  RedisModuleKey **set[] = {&c.pending, &c.active, &c.delayed};
  for (int i = 0; i < 3; ++i) {
    if (i != 1) *set[i] = emq_open_write(ctx, call.keys[i]);
    if (!emq_require_type(ctx, *set[i], REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  /* Not among the KEYS: the caller's ACL is checked here, as for rows. */
  c.dead_name = dead_beside(ctx, call.keys[5]);
  if (!emq_may_touch_rows(ctx, "EMQ.CLAIM", &c.dead_name, 1, EMQ_ROW_WRITE)) return REDISMODULE_OK;
  c.dead = emq_open_write(ctx, c.dead_name);
  if (!emq_require_type(ctx, c.dead, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  EmqLimits limits;
  if (!emq_read_limits(ctx, meta, call.keys[3], &limits)) return REDISMODULE_OK;
  EmqPolicy default_policy;
  if (grouped && !read_default_policy(ctx, &c.groups, &default_policy)) return REDISMODULE_OK;
  long long claimed_before;
  const int counted = emq_stats_counter(stats, EMQ_WORD_CLAIMED, &claimed_before);

  /* The jobs to claim: neither limit depends on the promotion, so the
   * number the script computes after it is known before it. */
  c.now = now;
  c.deadline = (double)now + lease_ms;
  c.want = (long long)max_count;
  if (limits.max_active > 0) {
    const long long room = limits.max_active - (long long)RedisModule_ValueLength(c.active);
    if (room < c.want) c.want = room;
  }
  const long long credit = limits.rate_max > 0 ? emq_rate_credit(&limits, now) : 0;
  if (limits.rate_max > 0 && credit / limits.rate_window_ms < c.want) c.want = credit / limits.rate_window_ms;
  if (c.want < 0) c.want = 0;

  /* Every row the first round can touch, checked against the caller's
   * ACL before anything is written: the due ids, and (without the group
   * block) the first ids of pending, which the first round pops from with
   * the promoted. With the block, each round's rows are checked before
   * its pop. */
  size_t due_n = 0, head_n = 0;
  RedisModuleString **due =
      promote_limit > 0 ? first_ids(ctx, c.delayed, (double)now, (size_t)promote_limit, &due_n) : NULL;
  RedisModuleString **head = grouped ? NULL : first_ids(ctx, c.pending, 1.0 / 0.0, (size_t)c.want, &head_n);
  c.check_first_round = grouped;
  /* Where the script lifts an ended pause: after every check that may
   * refuse the claim, before the rows the caller's ACL may refuse. */
  if (pause == EMQ_PAUSE_OVER) emq_lift_pause(ctx, meta, call.keys[3]);
  if (!may_touch(ctx, call.keys[5], due, due_n) || !may_touch(ctx, call.keys[5], head, head_n)) {
    return REDISMODULE_OK;
  }
  promote(ctx, &call, &c, due, due_n);
  if (grouped && promote_limit > 0 && !c.groups.refused) promote_groups(&c, (size_t)promote_limit);
  if (grouped && !c.groups.refused) join_star(&c);
  /* The ACL refused a group's key: replied, as the script stops there. */
  if (c.groups.refused) return REDISMODULE_OK;

  emq_zadd_batch_begin(ctx, &c.leases, c.active, call.keys[1], c.deadline, 16);
  if (grouped && RedisModule_ValueLength(c.groups.rot) > 0) {
    emq_serve_rotation(&c, &default_policy);
  } else {
    long long popped;
    emq_lease_from(&c, c.pending, call.keys[0], c.want, &popped);
  }
  emq_zadd_batch_end(ctx, &c.leases);
  /* Refused half-way, like the script the ACL stops: nothing counted. */
  if (emq_claim_refused(&c)) return REDISMODULE_OK;
  emq_count(ctx, stats, call.keys[4], EMQ_WORD_CLAIMED, counted, claimed_before, (long long)c.claimed, "claim");
  if (limits.rate_max > 0) spend(ctx, meta, call.keys[3], credit - (long long)c.claimed * limits.rate_window_ms, now);
  return reply_jobs(ctx, c.jobs, c.claimed);
}
