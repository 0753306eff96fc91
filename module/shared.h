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

/* ARGV[i] read as the scripts read an integer argument: the pattern
 * '^%d+$' ('^-?%d+$' when allow_minus), then tonumber, then within
 * min..max. Otherwise it replies the script's error text and returns 0. */
int emq_int_arg(const EmqCall *call, int i, int allow_minus, double min, double max, const char *error,
                double *out);

/* The ranges docs/protocol.md gives integer arguments. */
#define EMQ_MAX_MS 1e12    /* lease_ms, backoff_ms, keep_ms, older_than_ms */
#define EMQ_MAX_BATCH 1e6  /* max_count, promote_limit, limit, max_attempts */

/* ARGV[i] checked as the scripts check a job id (the wire's gate: 'JOB'
 * first). Otherwise it replies the script's EMQKIND error and returns 0. */
int emq_job_id_arg(const EmqCall *call, int i);

/* The script's checks on arguments, with Lua's meaning. */
int emq_matches_int(const char *s, size_t len, int allow_minus);   /* '^-?%d+$' or '^%d+$' */
int emq_lua_tonumber(const char *s, size_t len, double *out);      /* tonumber(s) ~= nil */
int emq_strict_ll(const char *s, size_t len, long long *out);      /* what HINCRBY accepts */
int emq_bytes_equal(RedisModuleString *a, const char *b, size_t blen);
int emq_str_equal(RedisModuleString *a, RedisModuleString *b);

/* The field names and values the transitions read and write, created
 * once at load and shared by every call: HashGet and HashSet take a field
 * as a string without copying it first, HashSet copies a value, Replicate
 * and the reply take a reference, and nothing changes them. One word
 * serves as a field and a value where the spelling is the same
 * (completed, dead). */
typedef enum {
  EMQ_WORD_STATE,
  EMQ_WORD_ATTEMPTS,
  EMQ_WORD_LEASE_EPOCH,
  EMQ_WORD_PAYLOAD,
  EMQ_WORD_LANE,
  EMQ_WORD_FAILURES,
  EMQ_WORD_ERROR,
  EMQ_WORD_RESULT,
  EMQ_WORD_PAUSED,
  EMQ_WORD_CLAIMED,
  EMQ_WORD_RETRIED,
  EMQ_WORD_RELEASED,
  EMQ_WORD_PENDING,
  EMQ_WORD_ACTIVE,
  EMQ_WORD_DELAYED,
  EMQ_WORD_DEAD,
  EMQ_WORD_COMPLETED,
  EMQ_WORD_ZERO, /* "0" */
  EMQ_WORD_EMPTY,
  EMQ_WORD_COUNT
} EmqWord;
int emq_create_words(void);
RedisModuleString *emq_word(EmqWord word);

/* Numbers as the server writes them into a reply or a command: an integer
 * in decimal; a score as "%.17g" (integral scores, which times and lanes
 * are, without going through printf). Each returns the length written. */
size_t emq_format_ll(char buf[24], long long value);
size_t emq_format_score(char buf[40], double score);

/* Replies with the script's error (EMQKIND ..., EMQARG ...). */
int emq_reply_error(RedisModuleCtx *ctx, const char *text);

/* Keys. Each key is opened once per call: for writing when the call may
 * write it, else for reading. The module is registered with
 * NO_IMPLICIT_SIGNAL_MODIFIED, so a handle opened for writing marks
 * nothing by itself: each write below signals the key it changed, as the
 * script's command would, and WATCH and client caching see exactly the
 * script's writes. Two open handles on one key must not meet a write
 * through either (the other would hold a value the write may have freed):
 * a handle is closed before the same key is opened again. */
RedisModuleKey *emq_open_read(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleKey *emq_open_write(RedisModuleCtx *ctx, RedisModuleString *name);
/* The state and lease_epoch fence of complete, fail, extend and release:
 * the row is active and holds exactly this epoch. */
int emq_holds_lease(RedisModuleKey *row, RedisModuleString *epoch);
/* The fenced opening of complete, fail and release: the job's row, opened
 * for writing, which must be a hash (else the WRONGTYPE error is replied)
 * held by the caller's lease (else 0 is replied: the lease was lost and
 * nothing changes). NULL once a reply has been sent. */
RedisModuleKey *emq_open_held_row(RedisModuleCtx *ctx, RedisModuleString *row_name, RedisModuleString *epoch);
/* The row's lane, as the scripts read it: absent is 0; 0 is returned when
 * it is not an integer in -1000..1000 (the pattern '^-?%d+$', then
 * tonumber). */
int emq_row_lane(RedisModuleKey *row, double *lane);
/* A row counter (attempts, lease_epoch, failures) as the scripts accept it:
 * absent, or the server's integer form in 18 characters at most, so no
 * increment of ours overflows it. *value holds it (0 when absent). */
int emq_row_field_counter(RedisModuleKey *row, EmqWord field, long long *value);
/* The scripts' reply for a row field that is malformed:
 * "EMQROW <row> <field> is not <rule>; nothing was written". */
#define EMQ_RULE_COUNTER "an integer counter"
#define EMQ_RULE_LANE "an integer in -1000..1000"
int emq_reply_malformed(RedisModuleCtx *ctx, RedisModuleString *row_name, EmqWord field, const char *rule);
RedisModuleString *emq_row_key(RedisModuleCtx *ctx, RedisModuleString *root, RedisModuleString *id);
/* HGET; NULL when the key or the field is absent. */
RedisModuleString *emq_hget(RedisModuleKey *key, EmqWord field);

/* The script would stop with a server error half-way on these; the module
 * checks them first and replies the server's error without writing. */
int emq_require_type(RedisModuleCtx *ctx, RedisModuleKey *key, int type);
/* A stats counter, checked before the first write as the scripts'
 * is_counter_of: 1 when stats is absent, or a hash whose field is absent or
 * a counter (as emq_row_field_counter), which *value then holds; 0 when
 * broken, and then the transition goes on without counting. */
int emq_stats_counter(RedisModuleKey *stats, EmqWord field, long long *value);
/* HINCRBY stats field n when counted, else the scripts' log line
 * "emq <who>: <stats> <field> is not an integer counter; ...". */
void emq_count(RedisModuleCtx *ctx, RedisModuleKey *stats, RedisModuleString *stats_name, EmqWord field, int counted,
               long long current, long long n, const char *who);

/* claim's is_row: a hash whose attempts and lease_epoch, where present,
 * are integers (the script's pattern, and values HINCRBY accepts). */
int emq_is_row(RedisModuleKey *row);
/* One of those counters: absent is 0; 0 when it is not an integer. */
int emq_row_counter(RedisModuleString *value, long long *out);

/* What every write does after changing name: signal it modified (WATCH,
 * client caching) and emit the command's keyspace event. */
void emq_changed(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *name);

/* The writes, each as the script's command of the same name. */
void emq_hset(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int pairs, const EmqWord *fields,
              RedisModuleString **values);
/* HSET row state <word>. */
void emq_set_state(RedisModuleCtx *ctx, RedisModuleKey *row, RedisModuleString *row_name, EmqWord state);
/* HINCRBY key field delta, where current is what field holds, read (and
 * checked) before this call's first write. */
long long emq_hincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, EmqWord field,
                      long long current, long long delta);
void emq_zadd(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, double score, RedisModuleString *id,
              int xx);
void emq_zrem(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id);
void emq_del(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);
void emq_pexpire(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, mstime_t at_ms);
/* ZPOPMIN key count: fills ids (at most count) and returns how many. */
int emq_zpopmin(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int count,
                RedisModuleString **ids);

/* The caller's ACL on row keys a transition builds from the row root: the
 * server checks the declared KEYS itself, never these. 1 when the caller
 * may touch every one of rows[0..n) (read, and write too when write); else
 * it has replied the script path's refusal ("ERR ACL failure in
 * EMQ.CLAIM: No permissions to access a key"), added the key to ACL LOG,
 * and returns 0. */
int emq_may_touch_rows(RedisModuleCtx *ctx, const char *command, RedisModuleString **rows, size_t n, int write);

/* The server's clock, as TIME gives the scripts: epoch milliseconds. */
mstime_t emq_now_ms(void);

#endif
