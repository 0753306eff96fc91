/* EMQ.CLAIM's weighted deficit round robin over the rotation: the script's
 * serve_head, command for command (docs/protocol.md, "Groups", claim
 * step 5). Every number is an integer below 2^53, as in the script. */
#include <stdio.h>
#include <string.h>

#include "claiming.h"
#include "lua_numbers.h"
#include "rows.h"

#define MAX_CREDIT 86400000000000LL
#define MAX_AT 1000000000000000LL
/* A group parked at its cap is looked at again no sooner than this. */
#define CAP_RECHECK_MS 1000

static int limit_of(RedisModuleString *v, long long lo, long long hi, long long *out) {
  if (v == NULL) return 0;
  size_t len;
  const char *s = RedisModule_StringPtrLen(v, &len);
  return emq_is_counter(s, len, out) && *out >= lo && *out <= hi;
}

static RedisModuleString *number(RedisModuleCtx *ctx, long long n) {
  char buf[24];
  return RedisModule_CreateString(ctx, buf, emq_format_ll(buf, n));
}

static void log_head(Claiming *c, RedisModuleString *h, const char *why) {
  size_t hlen, plen;
  const char *hs = RedisModule_StringPtrLen(h, &hlen), *p = RedisModule_StringPtrLen(c->groups.prefix, &plen);
  RedisModule_Log(c->groups.ctx, "warning",
                  "emq claim: group %.*s of %.*s %s; taken out of the rotation until group_set or an enqueue wakes "
                  "it",
                  (int)hlen, hs, (int)plen, p, why);
}

/* One turn's view of the head: its state hash, opened for writing. */
typedef struct {
  RedisModuleString *h, *grp_name;
  RedisModuleKey *grp;
  int is_star;
} Head;

static void hdel_in_deficit(Claiming *c, Head *hd) {
  static const EmqWord fields[] = {EMQ_WORD_IN, EMQ_WORD_DEFICIT};
  emq_hdel(c->groups.ctx, hd->grp, hd->grp_name, 2, fields);
}

static void set_field(Claiming *c, Head *hd, EmqWord field, RedisModuleString *value) {
  emq_hset(c->groups.ctx, hd->grp, hd->grp_name, 1, &field, &value);
}

/* The head leaves the rotation to wait in gwait until t. */
static void park(Claiming *c, Head *hd, EmqWord why, long long t) {
  EmqGroups *g = &c->groups;
  emq_rot_pop(g);
  static const EmqWord deficit = EMQ_WORD_DEFICIT;
  emq_hdel(g->ctx, hd->grp, hd->grp_name, 1, &deficit);
  set_field(c, hd, EMQ_WORD_IN, emq_word(why));
  emq_zadd(g->ctx, g->wait, g->wait_name, (double)t, hd->h, 0);
}

static void park_cap(Claiming *c, Head *hd) {
  RedisModuleKey *gact = emq_group_keys(&c->groups, hd->h)->gact;
  long long first = 0;
  if (RedisModule_KeyType(gact) == REDISMODULE_KEYTYPE_ZSET &&
      RedisModule_ZsetFirstInScoreRange(gact, -1.0 / 0.0, 1.0 / 0.0, 0, 0) == REDISMODULE_OK) {
    double score;
    RedisModule_ZsetRangeCurrentElement(gact, &score);
    first = (long long)score;
    RedisModule_ZsetRangeStop(gact);
  }
  const long long soonest = (long long)c->now + CAP_RECHECK_MS;
  park(c, hd, EMQ_WORD_CAP, first > soonest ? first : soonest);
}

static void park_rate(Claiming *c, Head *hd, const EmqPolicy *p, long long credit) {
  park(c, hd, EMQ_WORD_RATE, (long long)c->now + (p->rate_window_ms - credit + p->rate_max - 1) / p->rate_max);
}

static void write_bucket(Claiming *c, Head *hd, long long credit) {
  static const EmqWord fields[] = {EMQ_WORD_RATE_CREDIT, EMQ_WORD_RATE_AT};
  RedisModuleString *values[] = {number(c->groups.ctx, credit), number(c->groups.ctx, (long long)c->now)};
  emq_hset(c->groups.ctx, hd->grp, hd->grp_name, 2, fields, values);
}

static long long counted(Claiming *c, RedisModuleString *h) {
  RedisModuleKey *gact = emq_group_keys(&c->groups, h)->gact;
  return RedisModule_KeyType(gact) == REDISMODULE_KEYTYPE_ZSET ? (long long)RedisModule_ValueLength(gact) : 0;
}

/* The group's bucket brought up to now, as the queue's; 0 when a field
 * is broken. */
static int group_credit(Claiming *c, const EmqPolicy *p, RedisModuleString *credit_text, RedisModuleString *at_text,
                        long long *credit) {
  const long long cap = p->rate_max * p->rate_window_ms;
  if (credit_text == NULL || at_text == NULL) {
    *credit = cap;
    return 1;
  }
  long long was, at;
  if (!limit_of(credit_text, 0, MAX_CREDIT, &was) || !limit_of(at_text, 0, MAX_AT, &at)) return 0;
  long long elapsed = (long long)c->now - at;
  if (elapsed < 0) elapsed = 0;
  if (elapsed > p->rate_window_ms) elapsed = p->rate_window_ms;
  *credit = was + elapsed * p->rate_max;
  if (*credit > cap) *credit = cap;
  return 1;
}

static long long least(long long a, long long b) { return a < b ? a : b; }

/* The head's turn, with its grp opened; the script's serve_head after
 * its first reads. */
static void turn(Claiming *c, Head *hd, const EmqPolicy *default_policy) {
  EmqGroups *g = &c->groups;
  RedisModuleCtx *ctx = g->ctx;
  RedisModuleString *in = NULL, *deficit_text = NULL, *credit_text = NULL, *at_text = NULL;
  if (RedisModule_KeyType(hd->grp) == REDISMODULE_KEYTYPE_HASH) {
    RedisModule_HashGet(hd->grp, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_IN), &in, emq_word(EMQ_WORD_DEFICIT),
                        &deficit_text, emq_word(EMQ_WORD_RATE_CREDIT), &credit_text, emq_word(EMQ_WORD_RATE_AT),
                        &at_text, NULL);
  }
  if (!emq_str_equal(emq_word(EMQ_WORD_ROT), in)) {
    emq_rot_pop(g);
    return;
  }
  EmqPolicy own;
  const EmqPolicy *p = hd->is_star ? default_policy : (emq_policy_of(g, hd->h, &own) ? &own : NULL);
  if (p == NULL) {
    emq_rot_pop(g);
    hdel_in_deficit(c, hd);
    log_head(c, hd->h, "has a broken policy or keys of another type");
    return;
  }
  if (p->paused && !hd->is_star) {
    emq_rot_pop(g);
    hdel_in_deficit(c, hd);
    emq_group_tidy(g, hd->h);
    return;
  }
  long long room = -1, credit = 0, tokens = -1;
  if (p->max_active > 0 && !hd->is_star) {
    room = p->max_active - counted(c, hd->h);
    if (room <= 0) {
      emq_group_check_count(g, hd->h);
      if (g->refused) return;
      room = p->max_active - counted(c, hd->h);
      if (room <= 0) {
        park_cap(c, hd);
        return;
      }
    }
  }
  if (p->rate_max > 0 && !hd->is_star) {
    if (!group_credit(c, p, credit_text, at_text, &credit)) {
      emq_rot_pop(g);
      hdel_in_deficit(c, hd);
      log_head(c, hd->h, "has a broken bucket");
      return;
    }
    tokens = credit / p->rate_window_ms;
    if (tokens == 0) {
      write_bucket(c, hd, credit);
      park_rate(c, hd, p, credit);
      return;
    }
  }
  long long deficit;
  if (!limit_of(deficit_text, 1, 1000, &deficit)) deficit = p->weight;
  long long k = least(deficit, c->want - (long long)c->claimed);
  if (room >= 0) k = least(k, room);
  if (tokens >= 0) k = least(k, tokens);

  EmqGroupKeys *own_keys = hd->is_star ? NULL : emq_group_keys(g, hd->h);
  RedisModuleString *src_name = hd->is_star ? c->call->keys[0] : own_keys->gq_name;
  RedisModuleKey *src = hd->is_star ? c->pending : own_keys->gq;
  long long popped = 0;
  const long long served = emq_lease_from(c, src, src_name, k, &popped);
  const int empty = RedisModule_KeyType(src) == REDISMODULE_KEYTYPE_EMPTY;
  if (emq_claim_refused(c)) return;
  if (popped > 0 && !hd->is_star) emq_group_uncount(g, hd->h, popped);
  if (tokens >= 0) {
    credit -= served * p->rate_window_ms;
    write_bucket(c, hd, credit);
  }
  if (empty) {
    emq_rot_pop(g);
    if (hd->is_star) {
      emq_del(ctx, hd->grp, hd->grp_name);
    } else {
      hdel_in_deficit(c, hd);
      emq_group_tidy(g, hd->h);
    }
  } else if (room >= 0 && served >= room) {
    park_cap(c, hd);
  } else if (tokens >= 0 && served >= tokens) {
    park_rate(c, hd, p, credit);
  } else if (deficit - served <= 0) {
    emq_rot_pop(g);
    emq_rot_push(g, hd->h);
    /* Read above and not written since: without it, HDEL changes nothing. */
    static const EmqWord field = EMQ_WORD_DEFICIT;
    if (deficit_text != NULL) emq_hdel(ctx, hd->grp, hd->grp_name, 1, &field);
  } else {
    set_field(c, hd, EMQ_WORD_DEFICIT, number(ctx, deficit - served));
  }
}

/* The head's first reads, as serve_head's: * is served when its state is
 * a hash (or absent), a group when group_of takes it. */
static void serve_head(Claiming *c, const EmqPolicy *default_policy) {
  EmqGroups *g = &c->groups;
  Head hd;
  hd.h = RedisModule_ListGet(g->rot, 0);
  hd.is_star = emq_str_equal(emq_word(EMQ_WORD_STAR), hd.h);
  hd.grp_name = hd.is_star ? emq_group_key(g, g->grp_root, hd.h) : NULL;
  int ok;
  if (hd.is_star) {
    if (!emq_group_may_touch(g, &hd.grp_name, 1)) return;
    RedisModuleKey *probe = emq_open_read(g->ctx, hd.grp_name);
    const int t = RedisModule_KeyType(probe);
    RedisModule_CloseKey(probe);
    ok = t == REDISMODULE_KEYTYPE_HASH || t == REDISMODULE_KEYTYPE_EMPTY;
  } else {
    ok = emq_group_of(g, hd.h) != NULL;
  }
  if (g->refused) return;
  if (!ok) {
    emq_rot_pop(g);
    log_head(c, hd.h, "has a broken policy or keys of another type");
    return;
  }
  if (hd.is_star) {
    hd.grp = emq_open_write(g->ctx, hd.grp_name);
    turn(c, &hd, default_policy);
    RedisModule_CloseKey(hd.grp);
    return;
  }
  /* A group's turn works on the keys group_of took, held open through its
   * leases whatever group their rows name. */
  EmqGroupKeys *k = emq_group_keys(g, hd.h);
  hd.grp = k->grp;
  hd.grp_name = k->grp_name;
  emq_group_pin(g);
  turn(c, &hd, default_policy);
  emq_group_unpin(g);
}

void emq_serve_rotation(Claiming *c, const EmqPolicy *default_policy) {
  emq_groups_journal(&c->groups);
  while ((long long)c->claimed < c->want && !emq_claim_refused(c) &&
         RedisModule_KeyType(c->groups.rot) == REDISMODULE_KEYTYPE_LIST && RedisModule_ValueLength(c->groups.rot) > 0) {
    serve_head(c, default_policy);
  }
  /* Refused half-way too: what was written stays and is replicated, and
   * what the walk popped leaves *, as in the script. */
  emq_groups_flush(&c->groups);
}
