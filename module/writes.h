/* The writes, each as the script's command of the same name: change the
 * key, signal it modified (WATCH, client caching), emit the command's
 * keyspace event, and queue the command for replicas and the AOF (the
 * server wraps one call's commands in MULTI/EXEC). Every write of every
 * EMQ.* command goes through here. */
#ifndef EMQ_WRITES_H
#define EMQ_WRITES_H

#include <stddef.h>

#include "call.h"
#include "module_api.h"
#include "words.h"

/* What every write does after changing name. */
void emq_changed(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *name);

/* HSET key f1 v1 [f2 v2 [f3 v3]]. */
void emq_hset(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int pairs, const EmqWord *fields,
              RedisModuleString **values);
/* HSET key f1 v1 f2 v2 ...: pairs holds 2 * n field, value strings. */
void emq_hset_pairs(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString **pairs,
                    int n);
/* HSET row state <word>. */
void emq_set_state(RedisModuleCtx *ctx, RedisModuleKey *row, RedisModuleString *row_name, EmqWord state);
/* HINCRBY key field delta, where current is what field holds, read (and
 * checked) before this call's first write. */
long long emq_hincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, EmqWord field,
                      long long current, long long delta);
/* HINCRBY stats field n when counted, else the scripts' log line
 * "emq <who>: <stats> <field> is not an integer counter; ...". */
void emq_count(RedisModuleCtx *ctx, RedisModuleKey *stats, RedisModuleString *stats_name, EmqWord field, int counted,
               long long current, long long n, const char *who);

void emq_zadd(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, double score, RedisModuleString *id,
              int xx);
/* item after the n in items, which grow (doubling, in the command's pool)
 * when cap is reached: argv that grow with a batch. */
void emq_append(RedisModuleCtx *ctx, RedisModuleString ***items, size_t *n, size_t *cap, RedisModuleString *item);
/* ZADDs at one score, each applied and signalled when made (the script's
 * order of events), replicated as one ZADD at emq_zadd_batch_end. */
typedef struct {
  RedisModuleKey *key;
  RedisModuleString *name, *score_text, **argv;
  double score;
  size_t len, cap; /* argv grows as ids come */
} EmqZaddBatch;
void emq_zadd_batch_begin(RedisModuleCtx *ctx, EmqZaddBatch *b, RedisModuleKey *key, RedisModuleString *name,
                          double score, size_t cap);
void emq_zadd_batched(RedisModuleCtx *ctx, EmqZaddBatch *b, RedisModuleString *id);
void emq_zadd_batch_end(RedisModuleCtx *ctx, EmqZaddBatch *b);

void emq_zrem(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id);
/* ZPOPMIN key count: fills ids (at most count) and returns how many. */
int emq_zpopmin(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int count, RedisModuleString **ids);
void emq_del(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);
/* DEL names[0] .. names[n-1], one command: keys opened here, each deleted
 * and announced in order, replicated whole when it deleted any. */
void emq_del_keys(RedisModuleCtx *ctx, RedisModuleString **names, int n);
void emq_pexpire(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, mstime_t at_ms);
/* HDEL key f1 .. fn: silent, and replicated not at all, when no field was
 * there; "del" too when it empties the hash. */
void emq_hdel(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, int n, const EmqWord *fields);
/* ZINCRBY key delta member; the new score. */
double emq_zincrby(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, long long delta,
                   RedisModuleString *member);
/* RPUSH key value. */
void emq_rpush(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *value);
/* LPOP key, for a list that is not empty; "del" too when it empties it. */
void emq_lpop(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);
/* The same four without their replication, for a caller that replicates
 * what they add up to once (groups.h's journal): the key changed,
 * signalled and announced as above. ZREM's says whether it removed id. */
int emq_zrem_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleString *id);
double emq_zincrby_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, long long delta,
                                RedisModuleString *member);
void emq_rpush_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                            RedisModuleString *value);
void emq_lpop_unreplicated(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);
/* PERSIST: silent, and replicated not at all, when the key has no expiry. */
void emq_persist(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name);

/* The most of an error an entry carries. */
#define EMQ_EVENT_TEXT 256

/* The scripts' emit: given the stream, what XADD stream MAXLEN ~ len *
 * event <event> id <id> attempt <attempt> [error <error's first 256
 * bytes>] does, written through the stream API (StreamAdd,
 * StreamTrimByLength) with XADD's keyspace events, modified signal and
 * propagated form (the entry's id and the length left), so that the
 * entry, its trimming and what replicas and the AOF receive are the
 * script's, at a fraction of a RedisModule_Call's instructions. attempt is
 * the row's text (NULL: "0"); error NULL adds nothing. */
void emq_emit(RedisModuleCtx *ctx, const EmqEvents *events, EmqWord event, RedisModuleString *id,
              RedisModuleString *attempt, RedisModuleString *error);

#endif
