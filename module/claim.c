/* EMQ.CLAIM: the native twin of lua/claim.lua.
  Promote due delayed jobs, then lease up to max_count pending jobs.
  Claim order is the pending set's order: lowest lane first, then byte order
  of id. Each claimed job gets attempts+1, lease_epoch+1 (the fencing token
  of this lease), state active, and an active score of now+lease_ms.
  A paused queue (meta paused = 1) claims nothing and changes nothing.
  An id whose row is gone is dropped from the set and skipped; so is one
  whose row is not an emq/1 row (not a hash, or attempts or lease_epoch
  not an integer), which is also named in the server's log. The row stays
  for an operator to look at. The stats counter claimed counts the jobs
  claimed; when it is not an integer (or stats is not a hash), broken by
  some other writer, it is left as it is and named in the server's log,
  and the claim goes on: checked before any pop, so nothing is stranded.

  KEYS[1]  emq:{q}:pending    zset  member id, score lane
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:meta       hash  paused = 1 while paused
  KEYS[5]  emq:{q}:stats      hash  counter claimed
  KEYS[6]  emq:{q}:job:       the row root; a row is KEYS[6] .. id
  ARGV[1]  lease_ms           integer > 0
  ARGV[2]  max_count          integer > 0, jobs to claim at most
  ARGV[3]  promote_limit      integer >= 0, due delayed jobs to move first

  Reply:   flat job list [id, payload, attempts, lease_epoch, id, ...];
           empty when paused or nothing is due. attempts and lease_epoch
           are integers.
  Errors:  EMQARG when an argument is not an integer in range
*/
#include <stdio.h>
#include <stdlib.h>

#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_PENDING, EMQ_KEY_ACTIVE, EMQ_KEY_DELAYED,
                                    EMQ_KEY_META,    EMQ_KEY_STATS,  EMQ_KEY_ROW_ROOT};
static const EmqTransition kClaim = {"EMQ.CLAIM", kRoles, 6, 0};

/* The script's int_arg: '^-?%d+$', then tonumber. */
static int int_arg(const EmqCall *call, int i, double *out) {
  size_t len;
  const char *s = emq_arg(call, i, &len);
  return emq_matches_int(s, len, 1) && emq_lua_tonumber(s, len, out);
}

static void skip_malformed(RedisModuleCtx *ctx, RedisModuleString *row, RedisModuleString *set) {
  size_t rlen, slen;
  const char *r = RedisModule_StringPtrLen(row, &rlen);
  const char *s = RedisModule_StringPtrLen(set, &slen);
  RedisModule_Log(ctx, "warning",
                  "emq claim: %.*s is not an emq/1 row (a hash with integer attempts and lease_epoch); dropped from "
                  "%.*s, left in place for an operator",
                  (int)rlen, r, (int)slen, s);
}

/* claim.lua's is_counter_of(stats, 'claimed'): absent, or a hash whose
 * claimed field is absent or an integer counter. */
static int counts_claims(RedisModuleKey *stats) {
  const int type = RedisModule_KeyType(stats);
  if (type == REDISMODULE_KEYTYPE_EMPTY) return 1;
  if (type != REDISMODULE_KEYTYPE_HASH) return 0;
  long long n;
  return emq_row_counter(emq_hget(stats, "claimed"), &n);
}

static void skip_count(RedisModuleCtx *ctx, RedisModuleString *stats, size_t claimed) {
  size_t len;
  const char *s = RedisModule_StringPtrLen(stats, &len);
  RedisModule_Log(ctx, "warning",
                  "emq claim: %.*s claimed is not an integer counter; %zu claims not counted, the field left in "
                  "place for an operator",
                  (int)len, s, claimed);
}

/* Opens the row of id for writing when it is an emq/1 row; NULL when it
 * is gone (skipped) or malformed (skipped and logged). */
static RedisModuleKey *open_row(RedisModuleCtx *ctx, RedisModuleString *row_name, RedisModuleString *set) {
  RedisModuleKey *row = emq_open_read(ctx, row_name);
  if (RedisModule_KeyType(row) == REDISMODULE_KEYTYPE_EMPTY) return NULL;
  if (!emq_is_row(row)) {
    skip_malformed(ctx, row_name, set);
    return NULL;
  }
  return emq_reopen_write(ctx, row, row_name);
}

/* ZRANGEBYSCORE delayed -inf now LIMIT 0 limit, then per id: ZREM, and
 * back to pending at its lane when its row is an emq/1 row. */
static void promote(RedisModuleCtx *ctx, const EmqCall *call, mstime_t now, double limit) {
  RedisModuleString *delayed_name = call->keys[2], *pending_name = call->keys[0], *root = call->keys[5];
  RedisModuleKey *delayed = emq_open_read(ctx, delayed_name);
  size_t cap = RedisModule_ValueLength(delayed);
  if (cap == 0) {
    RedisModule_CloseKey(delayed);
    return;
  }
  if ((double)cap > limit) cap = (size_t)limit;
  RedisModuleString **due = malloc(sizeof *due * cap);
  size_t n = 0;
  if (RedisModule_ZsetFirstInScoreRange(delayed, -1.0 / 0.0, (double)now, 0, 0) == REDISMODULE_OK) {
    while (n < cap && !RedisModule_ZsetRangeEndReached(delayed)) {
      double score;
      due[n++] = RedisModule_ZsetRangeCurrentElement(delayed, &score);
      RedisModule_ZsetRangeNext(delayed);
    }
    RedisModule_ZsetRangeStop(delayed);
  }
  if (n > 0) {
    delayed = emq_reopen_write(ctx, delayed, delayed_name);
    RedisModuleKey *pending = emq_open_write(ctx, pending_name);
    for (size_t i = 0; i < n; ++i) {
      emq_zrem(ctx, delayed, delayed_name, due[i]);
      RedisModuleString *row_name = emq_row_key(ctx, root, due[i]);
      RedisModuleKey *row = open_row(ctx, row_name, delayed_name);
      if (row == NULL) continue;
      emq_hset1(ctx, row, row_name, "state", "pending");
      emq_zadd(ctx, pending, pending_name, emq_row_lane(row), due[i], 0);
      RedisModule_CloseKey(row);
    }
    RedisModule_CloseKey(pending);
  }
  RedisModule_CloseKey(delayed);
  free(due);
}

typedef struct {
  RedisModuleString *id;
  RedisModuleString *payload;
  long long attempts;
  long long epoch;
} Claimed;

/* One job's lease, with the script's effects in its order (HINCRBY
 * attempts, HINCRBY lease_epoch, HSET state: the three events), the three
 * fields written and replicated as one HSET. 0 when the row is gone or is
 * not an emq/1 row (skipped; the latter logged). */
static int lease_job(RedisModuleCtx *ctx, RedisModuleString *row_name, RedisModuleString *set_name,
                     RedisModuleString *active_state, Claimed *job) {
  RedisModuleKey *row = emq_open_write(ctx, row_name);
  const int type = RedisModule_KeyType(row);
  if (type == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_CloseKey(row);
    return 0;
  }
  RedisModuleString *attempts = NULL, *epoch = NULL;
  job->payload = NULL;
  if (type == REDISMODULE_KEYTYPE_HASH) {
    RedisModule_HashGet(row, REDISMODULE_HASH_CFIELDS, "attempts", &attempts, "lease_epoch", &epoch, "payload",
                        &job->payload, NULL);
  }
  if (type != REDISMODULE_KEYTYPE_HASH || !emq_row_counter(attempts, &job->attempts) ||
      !emq_row_counter(epoch, &job->epoch)) {
    skip_malformed(ctx, row_name, set_name);
    RedisModule_CloseKey(row);
    return 0;
  }
  char a[24], e[24];
  const int alen = snprintf(a, sizeof a, "%lld", ++job->attempts);
  const int elen = snprintf(e, sizeof e, "%lld", ++job->epoch);
  RedisModule_HashSet(row, REDISMODULE_HASH_CFIELDS, "attempts", RedisModule_CreateString(ctx, a, (size_t)alen),
                      "lease_epoch", RedisModule_CreateString(ctx, e, (size_t)elen), "state", active_state, NULL);
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_HASH, "hincrby", row_name);
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_HASH, "hincrby", row_name);
  RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_HASH, "hset", row_name);
  RedisModule_Replicate(ctx, "HSET", "scbcbcs", row_name, "attempts", a, (size_t)alen, "lease_epoch", e,
                        (size_t)elen, "state", active_state);
  RedisModule_CloseKey(row);
  return 1;
}

/* Pops in rounds, as the script does, so that ids whose row is gone do
 * not shorten the batch. Returns how many jobs it leased into out. The
 * active entries are replicated as one ZADD at the end. */
static size_t lease(RedisModuleCtx *ctx, const EmqCall *call, double deadline, double max_count, Claimed *out,
                    size_t cap) {
  RedisModuleString *pending_name = call->keys[0], *active_name = call->keys[1], *root = call->keys[5];
  RedisModuleKey *pending = emq_open_read(ctx, pending_name);
  if (RedisModule_ValueLength(pending) == 0) {
    RedisModule_CloseKey(pending);
    return 0;
  }
  pending = emq_reopen_write(ctx, pending, pending_name);
  RedisModuleKey *active = emq_open_write(ctx, active_name);
  RedisModuleString *active_state = RedisModule_CreateString(ctx, "active", 6);
  char score[40];
  const int slen = snprintf(score, sizeof score, "%.17g", deadline);
  RedisModuleString *score_str = RedisModule_CreateString(ctx, score, (size_t)slen);
  RedisModuleString **popped = malloc(sizeof *popped * cap);
  RedisModuleString **zadd = malloc(sizeof *zadd * (1 + 2 * cap));
  size_t zadd_len = 1;
  zadd[0] = active_name;
  size_t claimed = 0;
  while ((double)claimed < max_count) {
    int n = emq_zpopmin(ctx, pending, pending_name, (int)(cap - claimed), popped);
    if (n == 0) break;
    for (int i = 0; i < n; ++i) {
      Claimed *job = &out[claimed];
      if (!lease_job(ctx, emq_row_key(ctx, root, popped[i]), pending_name, active_state, job)) continue;
      job->id = popped[i];
      ++claimed;
      int flags = 0;
      RedisModule_ZsetAdd(active, deadline, popped[i], &flags);
      if (flags & (REDISMODULE_ZADD_ADDED | REDISMODULE_ZADD_UPDATED)) {
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_ZSET, "zadd", active_name);
        zadd[zadd_len++] = score_str;
        zadd[zadd_len++] = popped[i];
      }
    }
  }
  if (zadd_len > 1) RedisModule_Replicate(ctx, "ZADD", "v", zadd, zadd_len);
  RedisModule_CloseKey(active);
  RedisModule_CloseKey(pending);
  free(zadd);
  free(popped);
  return claimed;
}

int emq_claim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCall call;
  if (!emq_begin(ctx, argv, argc, &kClaim, &call)) return REDISMODULE_OK;
  double lease_ms, max_count, promote_limit;
  if (!int_arg(&call, 1, &lease_ms) || lease_ms <= 0) {
    return emq_reply_error(ctx, "EMQARG lease_ms must be an integer > 0");
  }
  if (!int_arg(&call, 2, &max_count) || max_count <= 0) {
    return emq_reply_error(ctx, "EMQARG max_count must be an integer > 0");
  }
  if (!int_arg(&call, 3, &promote_limit) || promote_limit < 0) {
    return emq_reply_error(ctx, "EMQARG promote_limit must be an integer >= 0");
  }

  RedisModuleKey *meta = emq_open_read(ctx, call.keys[3]);
  if (!emq_require_type(ctx, meta, REDISMODULE_KEYTYPE_HASH)) return REDISMODULE_OK;
  if (emq_bytes_equal(emq_hget(meta, "paused"), "1", 1)) return RedisModule_ReplyWithArray(ctx, 0);
  RedisModuleKey *stats = emq_open_read(ctx, call.keys[4]);
  for (int i = 0; i < 3; ++i) {
    if (!emq_require_type_of(ctx, call.keys[i], REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  const int counted = counts_claims(stats);

  mstime_t now = emq_now_ms();
  if (promote_limit > 0) promote(ctx, &call, now, promote_limit);

  /* No batch is larger than what pending holds once promotion is done. */
  RedisModuleKey *pending = emq_open_read(ctx, call.keys[0]);
  size_t cap = RedisModule_ValueLength(pending);
  RedisModule_CloseKey(pending);
  if ((double)cap > max_count) cap = (size_t)max_count;
  Claimed *jobs = malloc(sizeof *jobs * (cap ? cap : 1));
  size_t claimed = cap ? lease(ctx, &call, (double)now + lease_ms, max_count, jobs, cap) : 0;

  if (claimed > 0 && counted) {
    RedisModule_CloseKey(stats);
    emq_hincrby(ctx, emq_open_write(ctx, call.keys[4]), call.keys[4], "claimed", (long long)claimed);
  } else if (claimed > 0) {
    skip_count(ctx, call.keys[4], claimed);
  }
  RedisModule_ReplyWithArray(ctx, (long)(4 * claimed));
  for (size_t i = 0; i < claimed; ++i) {
    RedisModule_ReplyWithString(ctx, jobs[i].id);
    if (jobs[i].payload != NULL) {
      RedisModule_ReplyWithString(ctx, jobs[i].payload);
    } else {
      RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    }
    RedisModule_ReplyWithLongLong(ctx, jobs[i].attempts);
    RedisModule_ReplyWithLongLong(ctx, jobs[i].epoch);
  }
  free(jobs);
  return REDISMODULE_OK;
}
