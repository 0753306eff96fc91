/* Keys and rows as a transition reads them before its first write: opened
 * once per call, fenced by the lease, and every number it will use checked
 * with the scripts' rules, so that a malformed row or a key of the wrong
 * type stops the call, or is skipped, before anything is written. */
#ifndef EMQ_ROWS_H
#define EMQ_ROWS_H

#include "module_api.h"
#include "words.h"

/* Each key is opened once per call: for writing when the call may write
 * it, else for reading. The module is registered with
 * NO_IMPLICIT_SIGNAL_MODIFIED, so a handle opened for writing marks
 * nothing by itself: each write (writes.h) signals the key it changed, as
 * the script's command would, and WATCH and client caching see exactly the
 * script's writes. Two open handles on one key must not meet a write
 * through either (the other would hold a value the write may have freed):
 * a handle is closed before the same key is opened again. */
RedisModuleKey *emq_open_read(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleKey *emq_open_write(RedisModuleCtx *ctx, RedisModuleString *name);
RedisModuleString *emq_row_key(RedisModuleCtx *ctx, RedisModuleString *root, RedisModuleString *id);
/* HGET; NULL when the key or the field is absent. */
RedisModuleString *emq_hget(RedisModuleKey *key, EmqWord field);

/* The state and lease_epoch fence of complete, fail, extend and release:
 * the row is active and holds exactly this epoch. */
int emq_holds_lease(RedisModuleKey *row, RedisModuleString *epoch);
/* The fenced opening of complete, fail and release: the job's row, opened
 * for writing, which must be a hash (else the WRONGTYPE error is replied)
 * held by the caller's lease (else 0 is replied: the lease was lost and
 * nothing changes). NULL once a reply has been sent. */
RedisModuleKey *emq_open_held_row(RedisModuleCtx *ctx, RedisModuleString *row_name, RedisModuleString *epoch);

/* The script would stop with a server error half-way on this; the module
 * checks it first and replies the server's error without writing. */
int emq_require_type(RedisModuleCtx *ctx, RedisModuleKey *key, int type);

/* The row's lane, as the scripts read it: absent is 0; 0 is returned when
 * it is not an integer in -1000..1000. */
int emq_row_lane(RedisModuleKey *row, double *lane);
/* A counter value (emq_is_counter): absent is 0; 0 when malformed. */
int emq_row_counter(RedisModuleString *value, long long *out);
/* A row counter (attempts, lease_epoch, failures); *value holds it. */
int emq_row_field_counter(RedisModuleKey *row, EmqWord field, long long *value);
/* claim's is_row: a hash whose attempts and lease_epoch are counters. */
int emq_is_row(RedisModuleKey *row);
/* A stats counter, checked before the first write as the scripts'
 * is_counter_of: 1 when stats is absent, or a hash whose field is absent or
 * a counter, which *value then holds; 0 when broken, and then the
 * transition goes on without counting (emq_count). */
int emq_stats_counter(RedisModuleKey *stats, EmqWord field, long long *value);

/* The scripts' reply for a row field that is malformed:
 * "EMQROW <row> <field> is not <rule>; nothing was written". */
#define EMQ_RULE_COUNTER "an integer counter"
#define EMQ_RULE_LANE "an integer in -1000..1000"
int emq_reply_malformed(RedisModuleCtx *ctx, RedisModuleString *row_name, EmqWord field, const char *rule);

#endif
