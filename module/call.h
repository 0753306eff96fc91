/* One EMQ.* call before it writes: its shape (arity, numkeys, each key's
 * layout, the wire identity), its arguments read as the scripts read them,
 * and the caller's ACL on the row keys a transition builds from the root.
 * Every check here replies and stops the call before anything is written. */
#ifndef EMQ_CALL_H
#define EMQ_CALL_H

#include <stddef.h>

#include "module_api.h"

/* What a key position must hold: emq:{q}:<type>. */
typedef enum {
  EMQ_KEY_ROW,      /* emq:{q}:job:<ARGV[1]> */
  EMQ_KEY_ROW_ROOT, /* emq:{q}:job: */
  EMQ_KEY_PENDING,
  EMQ_KEY_ACTIVE,
  EMQ_KEY_DELAYED,
  EMQ_KEY_DEAD,
  EMQ_KEY_META,
  EMQ_KEY_STATS,
  EMQ_KEY_OUTBOX,
  EMQ_KEY_DEPS_ROOT,    /* emq:{q}:deps: */
  EMQ_KEY_RESULTS_ROOT, /* emq:{q}:results: */
  EMQ_KEY_EVENTS,       /* emq:{q}:events */
  EMQ_KEY_UNIQ_ROOT,    /* emq:{q}:uniq: */
  EMQ_KEY_LOCK,         /* emq:{q}:uniq:<k>, k not empty */
  /* The group block (docs/protocol.md, "Groups"): seven KEYS in this
   * order, all or none, known by their shapes. */
  EMQ_KEY_GQ_ROOT,   /* emq:{q}:gq: */
  EMQ_KEY_GRP_ROOT,  /* emq:{q}:grp: */
  EMQ_KEY_GACT_ROOT, /* emq:{q}:gact: */
  EMQ_KEY_GIDX,
  EMQ_KEY_ROT,
  EMQ_KEY_GROUPS,
  EMQ_KEY_GWAIT,
  /* A group's own keys, as the optioned enqueue takes them: root + g. */
  EMQ_KEY_GQ,  /* emq:{q}:gq:<g>, g not empty */
  EMQ_KEY_GRP, /* emq:{q}:grp:<g> */
  EMQ_KEY_GACT /* emq:{q}:gact:<g> */
} EmqKeyRole;

/* The most optional KEYS a transition takes before the stream: the group
 * block and the uniq root. */
#define EMQ_MAX_OPTIONAL 9
/* The block's size. */
#define EMQ_GROUP_BLOCK 7

typedef struct {
  const char *name;        /* "EMQ.CLAIM", for messages */
  const EmqKeyRole *roles; /* one per KEYS position, in order */
  int num_keys;
  int min_args; /* ARGV the script cannot run without */
  /* It takes the queue's events stream as one more KEY, last, and the
   * stream's length as one more ARGV, last (PROTOCOL.md, "Events"). */
  int events;
  /* KEYS it may take after its own, before the stream, each at most once
   * and in this order, each known by its shape (the uniq root; the
   * optioned enqueue's delayed and lock). */
  EmqKeyRole optional[EMQ_MAX_OPTIONAL];
  int num_optional;
} EmqTransition;

/* The queue's events stream, as a call was given it: stream NULL when not;
 * key, its handle, open for writing from the type check on, so that the
 * call's entries are appended through it. */
typedef struct {
  RedisModuleString *stream;
  RedisModuleKey *key;
  long long len; /* MAXLEN ~ */
} EmqEvents;

typedef struct {
  RedisModuleCtx *ctx;
  RedisModuleString **keys; /* KEYS[1] is keys[0] */
  RedisModuleString **args; /* ARGV[1] is args[0] */
  int num_args;             /* the transition's own: without the stream's length */
  EmqEvents events;
  /* The optional KEYS given, by their place in EmqTransition.optional:
   * NULL where not given. */
  RedisModuleString *optional[EMQ_MAX_OPTIONAL];
} EmqCall;

/* The optional KEY given in this role (the uniq root, a lock, delayed),
 * or NULL. */
RedisModuleString *emq_optional_key(const EmqCall *call, const EmqTransition *t, EmqKeyRole role);

/* Checks arity, numkeys, each key's layout (the optional ones told apart
 * by their shape) and the wire identity, in that order; then, given the events stream, its length and its type, as the
 * scripts check them first. On failure it has replied (EMQLAYOUT, EMQWIRE,
 * an arity error, the scripts' EMQARG or WRONGTYPE) and returns 0; nothing
 * has been written. */
int emq_begin(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t, EmqCall *call);

/* ARGV[i] (1-based) as bytes, or NULL where the script would see nil. */
const char *emq_arg(const EmqCall *call, int i, size_t *len);

/* ARGV[i] read as the scripts read an integer argument: the pattern
 * '^%d+$' ('^-?%d+$' when allow_minus), then tonumber, then within
 * min..max. Otherwise it replies the script's error text and returns 0. */
int emq_int_arg(const EmqCall *call, int i, int allow_minus, double min, double max, const char *error, double *out);

/* The ranges docs/protocol.md gives integer arguments. */
#define EMQ_MAX_MS 1e12    /* lease_ms, backoff_ms, keep_ms, older_than_ms */
#define EMQ_MAX_BATCH 1e6  /* max_count, promote_limit, limit, max_attempts */
#define EMQ_MAX_EVENTS 1e7 /* an events stream's length */

/* ARGV[i] checked as the scripts check a job id (the wire's gate: 'JOB'
 * first). Otherwise it replies the script's EMQKIND error and returns 0. */
int emq_job_id_arg(const EmqCall *call, int i);

/* Replies with the script's error (EMQKIND ..., EMQARG ...). */
int emq_reply_error(RedisModuleCtx *ctx, const char *text);

/* The caller's ACL on keys a transition builds from a root (rows, a
 * parent's deps and results): the server checks the declared KEYS itself,
 * never these. 1 when the caller may touch every one of rows[0..n) as
 * flags say (REDISMODULE_CMD_KEY_*: ACCESS to read, UPDATE to write,
 * DELETE for the script's DEL); else it has replied the script path's
 * refusal ("ERR ACL failure in EMQ.CLAIM: No permissions to access a
 * key"), added the key to ACL LOG, and returns 0. */
int emq_may_touch_rows(RedisModuleCtx *ctx, const char *command, RedisModuleString **rows, size_t n, uint64_t flags);
/* Whether the caller's ACL lets it touch key as flags say: a refusal is
 * added to ACL LOG, as the server logs a script's, and not replied; the
 * caller goes on without the key (a unique key's release, which the
 * script's pcall skips alike). */
int emq_acl_allows(RedisModuleCtx *ctx, RedisModuleString *key, uint64_t flags);
/* A row a transition reads and writes. */
#define EMQ_ROW_WRITE (REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE)

/* The server's clock, as TIME gives the scripts: epoch milliseconds. */
mstime_t emq_now_ms(void);

#endif
