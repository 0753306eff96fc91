/* The steps EMQ.COMPLETE and EMQ.FAIL share with their flow forms,
 * EMQ.COMPLETE_FLOW and EMQ.FAIL_FLOW. lua/complete_flow.lua is
 * lua/complete.lua with steps added between complete's (and fail_flow
 * is fail so), so each command is these steps in its script's order, and
 * a change to complete or fail reaches its flow form with it. */
#ifndef EMQ_SETTLE_H
#define EMQ_SETTLE_H

#include "call.h"
#include "groups.h"
#include "rows.h"
#include "words.h"
#include "writes.h"

/* A completion, read and checked before its first write. */
typedef struct {
  EmqCall call;
  RedisModuleString *row_name, *active_name, *stats_name, *id;
  RedisModuleKey *row, *active, *stats;
  RedisModuleString *attempts; /* the row's, read before the row may go */
  /* The uniq root given (or NULL), and the row's unique and unique_mode. */
  RedisModuleString *uniq_root, *unique, *unique_mode;
  double keep_ms;
  long long completed;
  int counted;
  EmqGroups groups;
  RedisModuleString *group; /* the row's group, given the block; else NULL */
} EmqCompletion;

/* complete's checks, in its script's order: the call, the id, keep_ms, the
 * row held by the lease, active's type, the stats counter. KEYS[1..3] are
 * row, active and stats. 0 once it has replied; nothing is written. */
int emq_completion_open(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t,
                        EmqCompletion *c);
/* HSET row state completed result <ARGV[4] or "">. */
void emq_completion_keep(RedisModuleCtx *ctx, const EmqCompletion *c);
/* complete's row: deleted when keep_ms is 0, else kept with its result,
 * expiring in keep_ms. */
void emq_completion_settle_row(RedisModuleCtx *ctx, const EmqCompletion *c);
/* A grouped job leaves its group's count (out of group). 0 when the
 * caller's ACL refused a row its count check read: replied, and the call
 * stops there, as the script does. */
int emq_completion_group(RedisModuleCtx *ctx, EmqCompletion *c);
/* The job's unique key freed (release_key). */
void emq_completion_release(RedisModuleCtx *ctx, const EmqCompletion *c);
/* The completed entry, given the stream. */
void emq_completion_emit(RedisModuleCtx *ctx, const EmqCompletion *c);
/* stats completed + 1 (or the log line of a broken counter), and the
 * reply 1; who names the script in that line. */
int emq_completion_finish(RedisModuleCtx *ctx, const EmqCompletion *c, const char *who);

/* A failure, read and checked before its first write: where the job goes
 * (dead now, delayed until now + backoff_ms, or pending at its lane). */
typedef struct {
  EmqCall call;
  RedisModuleString *row_name, *active_name, *target_name, *stats_name, *id, *error;
  RedisModuleKey *row, *active, *target, *stats;
  long long failures, counter;
  double score;
  mstime_t now;
  EmqWord state, counter_field;
  int dies, counted;
  RedisModuleString *uniq_root, *unique, *unique_mode;
  EmqGroups groups;
  RedisModuleString *group; /* the row's group, given the block; else NULL */
} EmqFailure;

/* fail's checks, in its script's order: the call, the id, max_attempts,
 * backoff_ms, permanent, the row held by the lease, its attempts,
 * failures and lane, the target's and active's types, the stats counter.
 * KEYS[1..6] are row, active, delayed, pending, dead and stats. 0 once it
 * has replied; nothing is written. */
int emq_failure_open(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t, EmqFailure *f);
/* ZREM active, HINCRBY failures, HSET error, HSET state, ZADD target (a
 * grouped job retried now: no ZADD, emq_failure_group sends it to its
 * group). */
void emq_failure_settle(RedisModuleCtx *ctx, const EmqFailure *f);
/* A grouped job: retried now, to its group; else out of its count. 0 as
 * emq_completion_group's. */
int emq_failure_group(RedisModuleCtx *ctx, EmqFailure *f);
/* A job that dies frees its unique key (release_key); then the entry of
 * the state written (with the error), the counter (dead or retried), and
 * the reply: 2 dead, 1 will retry. */
int emq_failure_finish(RedisModuleCtx *ctx, const EmqFailure *f, const char *who);

#endif
