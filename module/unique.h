/* Unique jobs on the native executor (docs/protocol.md, "Unique jobs"):
 * the optioned enqueue's named options, who holds a key, the counters of
 * a duplicate, and the release an ending transition makes through the
 * uniq root. Each is the twin of the scripts' helper of the same name
 * (options_of, holder_of, count_unique, release_key), byte for byte. */
#ifndef EMQ_UNIQUE_H
#define EMQ_UNIQUE_H

#include "call.h"
#include "words.h"

/* The options a call gave, as options_of returns them. A string is NULL
 * when not given; a number's flag says whether it was. */
typedef struct {
  int has_lane, has_due;
  double lane, due_ms, unique_for_ms; /* unique_for_ms 0: not given */
  RedisModuleString *unique, *traceparent, *tracestate, *group;
  const char *unique_mode; /* finished, started, window or replace; NULL without unique */
} EmqOptions;

/* The names the optioned enqueue takes, and those the flow and schedule
 * forms take, each as a space-separated list (options_of's allowed). */
#define EMQ_ENQUEUE_OPTIONS "lane due_ms unique unique_mode unique_for_ms traceparent tracestate group"

/* ARGV[first..last] read as options_of reads them (docs/protocol.md, "The
 * optioned enqueue"): pairs, each name allowed and given once, each value
 * in its range, then together. 0 once it has replied the EMQARG. */
int emq_options_read(const EmqCall *call, int first, int last, const char *allowed, const char *who, EmqOptions *o);

/* Who holds key through lock (holder_of): 1 with the holder's id and state
 * (the row's, "gone" for a window whose row is gone), 0 when the key is
 * free. queue is emq:{q}: of the call. -1 once it has replied the ACL
 * refusal of the holder's row (read; write too when writes). */
int emq_holder_of(RedisModuleCtx *ctx, const char *command, RedisModuleString *lock, RedisModuleString *key,
                  const char *queue, size_t qlen, int writes, RedisModuleString **holder, RedisModuleString **state);

/* The caller's ACL on emq:{q}:stats, which a duplicate counts in: 1 when
 * it may write it, else 0 once it has replied the refusal. */
int emq_may_touch_stats(RedisModuleCtx *ctx, const char *command, const char *queue, size_t qlen);
/* stats duplicates or replaced + 1 in emq:{q}:stats, or the log line of a
 * broken counter (count_unique). */
void emq_count_unique(RedisModuleCtx *ctx, const char *queue, size_t qlen, EmqWord field, const char *who);

/* The lock of a row's unique key this call may free or take (lock_of):
 * NULL without the uniq root, for a key that is not well formed, or for a
 * window. */
RedisModuleString *emq_lock_of(RedisModuleCtx *ctx, RedisModuleString *uniq_root, RedisModuleString *key,
                               RedisModuleString *mode);
/* release_key: DEL the lock when it holds id. A lock the caller's ACL
 * refuses is left as it is (and logged), as the script's pcall leaves it:
 * a stale pointer, which blocks nothing. */
void emq_release_key(RedisModuleCtx *ctx, RedisModuleString *uniq_root, RedisModuleString *id, RedisModuleString *key,
                     RedisModuleString *mode);

/* SET lock id, with PX unique_for_ms in window mode (take_lock), as the
 * server's own SET. */
void emq_take_lock(RedisModuleCtx *ctx, RedisModuleString *lock, RedisModuleString *id, const EmqOptions *o);

/* [code, holder, state]: a duplicate (0) or a replace (2). */
int emq_reply_holder(RedisModuleCtx *ctx, long long code, RedisModuleString *holder, RedisModuleString *state);

#endif
