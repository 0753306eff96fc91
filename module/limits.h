/* A queue's limits as EMQ.CLAIM reads them from meta (PROTOCOL.md,
 * "Limits"), with lua/claim.lua's rules: each field the server's integer
 * form within its range, a rate both fields or neither, and the bucket
 * (rate_credit, rate_at) read only when a rate is set. All arithmetic is
 * on integers below 2^53, so the script's doubles compute the same. */
#ifndef EMQ_LIMITS_H
#define EMQ_LIMITS_H

#include "module_api.h"

typedef struct {
  long long max_active; /* 0: no limit */
  long long rate_max;   /* 0: no rate */
  long long rate_window_ms;
  long long rate_credit; /* the bucket, when has_bucket; else full */
  long long rate_at;
  int has_bucket;
} EmqLimits;

/* The limit fields of meta (a hash, or absent). 1 when every one present
 * is well formed; else it has replied the script's error, "EMQARG <meta>
 * <field> must be ...", and returns 0. */
int emq_read_limits(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name, EmqLimits *out);

/* The bucket brought up to now (tokens x rate_window_ms): full when it has
 * no state, else refilled rate_max per ms since rate_at, at most one
 * window's worth and nothing when the clock stepped back, capped at
 * rate_max tokens. */
long long emq_rate_credit(const EmqLimits *l, long long now);

#endif
