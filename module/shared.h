/* What the six EMQ.* transitions share: the call's shape (numkeys, key
 * layout, the wire identity), the script's ways of reading arguments and
 * row fields, and the writes, each of which does what the script's command
 * would: change the key, emit the command's keyspace event, and queue the
 * command for replicas and the AOF (the server wraps one call's commands
 * in MULTI/EXEC). */
#ifndef EMQ_SHARED_H
#define EMQ_SHARED_H

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
  EMQ_KEY_STATS
} EmqKeyRole;

typedef struct {
  const char *name;         /* "EMQ.CLAIM", for messages */
  const EmqKeyRole *roles;  /* one per KEYS position, in order */
  int num_keys;
  int min_args;             /* ARGV the script cannot run without */
} EmqTransition;

typedef struct {
  RedisModuleCtx *ctx;
  RedisModuleString **keys; /* KEYS[1] is keys[0] */
  RedisModuleString **args; /* ARGV[1] is args[0] */
  int num_args;
} EmqCall;

/* Checks arity, numkeys, each key's layout and the wire identity, in that
 * order. On failure it has replied (EMQLAYOUT, EMQWIRE or an arity error)
 * and returns 0; nothing has been written. */
int emq_begin(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t, EmqCall *call);

/* ARGV[i] (1-based) as bytes, or NULL where the script would see nil. */
const char *emq_arg(const EmqCall *call, int i, size_t *len);

/* The script's checks on arguments, with Lua's meaning. */
int emq_is_job_id(const char *s, size_t len);                      /* string.sub(s, 1, 3) == 'JOB' */
int emq_matches_int(const char *s, size_t len, int allow_minus);   /* '^-?%d+$' or '^%d+$' */
int emq_lua_tonumber(const char *s, size_t len, double *out);      /* tonumber(s) ~= nil */
int emq_strict_ll(const char *s, size_t len, long long *out);      /* what HINCRBY accepts */
int emq_bytes_equal(RedisModuleString *a, const char *b, size_t blen);
int emq_str_equal(RedisModuleString *a, RedisModuleString *b);

/* Replies with the script's error (EMQKIND ..., EMQARG ...). */
int emq_reply_error(RedisModuleCtx *ctx, const char *text);

/* Keys. Two open handles on one key must not meet a write through either
 * (the other would hold a value the write may have freed): a handle is
 * closed before the same key is opened again. A key only read is opened for reading, so that WATCH and client
 * caching see a change only where the script's commands would write. A
 * read handle is closed before the same key is opened for writing. */
RedisModuleKey *emq_open_read(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleKey *emq_open_write(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleKey *emq_reopen_write(RedisModuleCtx *ctx, RedisModuleKey *read, RedisModuleString *name);
/* The state and lease_epoch fence of complete, fail, extend and release:
 * the row is active and holds exactly this epoch. */
int emq_holds_lease(RedisModuleKey *row, RedisModuleString *epoch);
/* tonumber(HGET row lane or '0') or 0, as the scripts place a job back. */
double emq_row_lane(RedisModuleKey *row);
RedisModuleString *emq_row_key(RedisModuleCtx *ctx, RedisModuleString *root, RedisModuleString *id);
/* HGET; NULL when the key or the field is absent. */
RedisModuleString *emq_hget(RedisModuleKey *key, const char *field);

/* The script would stop with a server error half-way on these; the module
 * checks them first and replies the server's error without writing. */
int emq_require_type(RedisModuleCtx *ctx, RedisModuleKey *key, int type);
int emq_require_type_of(RedisModuleCtx *ctx, RedisModuleString *name, int type);
int emq_require_counter(RedisModuleCtx *ctx, RedisModuleKey *hash, const char *field, long long delta);

/* claim's is_row: a hash whose attempts and lease_epoch, where present,
 * are integers (the script's pattern, and values HINCRBY accepts). */
int emq_is_row(RedisModuleKey *row);
/* One of those counters: absent is 0; 0 when it is not an integer. */
int emq_row_counter(RedisModuleString *value, long long *out);

/* The writes, each as the script's command of the same name. */
void emq_hset(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int pairs, const char **fields,
              RedisModuleString **values);
void emq_hset1(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, const char *field,
               const char *value);
long long emq_hincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, const char *field,
                      long long delta);
void emq_zadd(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, double score, RedisModuleString *id,
              int xx);
void emq_zrem(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id);
void emq_del(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);
void emq_pexpire(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, mstime_t at_ms);
/* ZPOPMIN key count: fills ids (at most count) and returns how many. */
int emq_zpopmin(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int count,
                RedisModuleString **ids);

/* The server's clock, as TIME gives the scripts: epoch milliseconds. */
mstime_t emq_now_ms(void);

#endif
