/* A queue's limits from meta: see limits.h. */
#include "limits.h"

#include <stdio.h>

#include "lua_numbers.h"
#include "rows.h"

#define MAX_CREDIT 86400000000000LL /* rate_max x rate_window_ms at their largest */
#define MAX_AT 1000000000000000LL

/* A field as the script's limit_of: the server's integer form (what
 * HINCRBY takes, in 18 characters), within lo..hi. */
static int limit_of(RedisModuleString *v, long long lo, long long hi, long long *out) {
  size_t len;
  const char *s = RedisModule_StringPtrLen(v, &len);
  return emq_is_counter(s, len, out) && *out >= lo && *out <= hi;
}

static int refuse(RedisModuleCtx *ctx, RedisModuleString *meta_name, const char *what) {
  size_t len;
  const char *m = RedisModule_StringPtrLen(meta_name, &len);
  char text[512];
  snprintf(text, sizeof text, "EMQARG %.*s %s", (int)len, m, what);
  RedisModule_ReplyWithError(ctx, text);
  return 0;
}

int emq_read_limits(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name, EmqLimits *out) {
  *out = (EmqLimits){0};
  if (RedisModule_KeyType(meta) != REDISMODULE_KEYTYPE_HASH) return 1;
  RedisModuleString *max_active = NULL, *rate_max = NULL, *window = NULL, *credit = NULL, *at = NULL;
  RedisModule_HashGet(meta, REDISMODULE_HASH_NONE, emq_word(EMQ_WORD_MAX_ACTIVE), &max_active,
                      emq_word(EMQ_WORD_RATE_MAX), &rate_max, emq_word(EMQ_WORD_RATE_WINDOW_MS), &window,
                      emq_word(EMQ_WORD_RATE_CREDIT), &credit, emq_word(EMQ_WORD_RATE_AT), &at, NULL);
  if (max_active != NULL && !limit_of(max_active, 1, 1000000, &out->max_active)) {
    return refuse(ctx, meta_name, "max_active must be an integer in 1..1000000");
  }
  if (rate_max != NULL && !limit_of(rate_max, 1, 1000000, &out->rate_max)) {
    return refuse(ctx, meta_name, "rate_max must be an integer in 1..1000000");
  }
  if (window != NULL && !limit_of(window, 1, 86400000, &out->rate_window_ms)) {
    return refuse(ctx, meta_name, "rate_window_ms must be an integer in 1..86400000");
  }
  if (rate_max != NULL && window == NULL) return refuse(ctx, meta_name, "rate_window_ms must be set with rate_max");
  if (window != NULL && rate_max == NULL) return refuse(ctx, meta_name, "rate_max must be set with rate_window_ms");
  if (rate_max == NULL) return 1;
  if (credit != NULL && !limit_of(credit, 0, MAX_CREDIT, &out->rate_credit)) {
    return refuse(ctx, meta_name, "rate_credit must be an integer in 0..86400000000000 (delete it for a full bucket)");
  }
  if (at != NULL && !limit_of(at, 0, MAX_AT, &out->rate_at)) {
    return refuse(ctx, meta_name, "rate_at must be an integer in 0..1000000000000000 (delete it for a full bucket)");
  }
  out->has_bucket = credit != NULL && at != NULL;
  return 1;
}

long long emq_rate_credit(const EmqLimits *l, long long now) {
  const long long cap = l->rate_max * l->rate_window_ms;
  if (!l->has_bucket) return cap;
  long long elapsed = now - l->rate_at;
  if (elapsed < 0) elapsed = 0;
  if (elapsed > l->rate_window_ms) elapsed = l->rate_window_ms;
  const long long credit = l->rate_credit + elapsed * l->rate_max;
  return credit < cap ? credit : cap;
}
